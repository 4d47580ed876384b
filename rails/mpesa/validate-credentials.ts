import { classifyDarajaError } from './daraja-errors.js';
import type { MpesaMerchant } from './merchant.js';
import { buildStkQueryBody } from './stk-request.js';
import { DarajaAnswerError, DarajaUnreachableError, fetchAccessToken, postJson, type AccessToken } from './daraja-client.js';
import { stkQueryPath } from './daraja-paths.js';

/**
 * A CheckoutRequestID in Daraja's own format (ws_CO_ + DDMMYYYYHHmmss + milliseconds + MSISDN)
 * dated 1 January 2000, so it is well-formed but can never have been issued.
 */
export const probeCheckoutRequestId = 'ws_CO_01012000000000000254700000000';

export type ValidationResult =
  | { outcome: 'accepted'; token: AccessToken; evidence: string }
  | { outcome: 'rejected'; reason: string }
  | { outcome: 'unavailable'; reason: string };

export interface CredentialsToCheck {
  consumerKey: string;
  consumerSecret: string;
  merchant: MpesaMerchant;
  passkey: string;
}

/**
 * Proves credentials to Daraja without charging anyone (docs/mobile-money.md, "What the
 * validation proves"): an OAuth token proves the key and secret; an STK push query about a
 * transaction that cannot exist is signed with the shortcode + passkey Password, and Daraja
 * checks that Password before it looks the transaction up. "Wrong credentials" or "Merchant does
 * not exist" is a refusal; "unknown transaction" (or "being processed") means the pair passed.
 */
export async function validateCredentials(baseUrl: string, c: CredentialsToCheck, now: Date): Promise<ValidationResult> {
  let token: AccessToken;
  try {
    token = await fetchAccessToken(baseUrl, c.consumerKey, c.consumerSecret);
  } catch (err) {
    return transportOrRefusal(err, 'the consumer key and secret were refused');
  }
  let answer;
  try {
    answer = await postJson(baseUrl, stkQueryPath, token.token, buildStkQueryBody(c.merchant, c.passkey, now, probeCheckoutRequestId));
  } catch (err) {
    return transportOrRefusal(err, 'the shortcode and passkey check failed');
  }
  if (answer.status === 200) return { outcome: 'accepted', token, evidence: 'query answered 200' };
  const error = classifyDarajaError(answer.status, answer.json ?? answer.text);
  switch (error.kind) {
    case 'unknown_request':
    case 'pending':
      return { outcome: 'accepted', token, evidence: `query refused only the probe id: ${error.errorMessage}` };
    case 'credentials':
      return { outcome: 'rejected', reason: `the shortcode and passkey were refused: ${error.errorMessage}` };
    case 'invalid_token':
      // A token minted a moment ago: the app lacks the M-Pesa Express product, or the keys belong
      // to the other environment.
      return { outcome: 'rejected', reason: `the app's token is not accepted for M-Pesa Express (${error.errorMessage}); check that the Daraja app has the M-Pesa Express product in this environment` };
    case 'busy':
      return { outcome: 'unavailable', reason: `M-Pesa is busy: ${error.errorMessage}` };
    default:
      return { outcome: 'unavailable', reason: `M-Pesa gave an answer that neither accepts nor refuses the credentials: ${error.errorMessage}` };
  }
}

function transportOrRefusal(err: unknown, what: string): ValidationResult {
  if (err instanceof DarajaUnreachableError) return { outcome: 'unavailable', reason: err.message };
  if (err instanceof DarajaAnswerError) {
    if (err.answer.kind === 'credentials') return { outcome: 'rejected', reason: `${what}: ${err.answer.errorMessage}` };
    return { outcome: 'unavailable', reason: `M-Pesa could not check the credentials: ${err.answer.errorMessage}` };
  }
  throw err;
}
