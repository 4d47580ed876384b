import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import { saveC2bRegistration, setC2bPolicy } from '../../db/mpesa-c2b-repo.js';
import type { Environment } from '../../domain/environment.js';
import {
  c2bConfirmationPath, c2bRegisterPathV1, c2bRegisterPathV2, c2bResponseType, c2bValidationPath, forbiddenWordIn, hashC2bToken, newC2bToken,
  type C2bRegisterBody,
} from '../../rails/mpesa/c2b.js';
import { classifyDarajaError } from '../../rails/mpesa/daraja-errors.js';
import { postJson, type JsonAnswer } from '../../rails/mpesa/daraja-client.js';
import type { MpesaMerchant } from '../../rails/mpesa/merchant.js';

/** What connect reports about the C2B URLs: registered, or why not (in the API's error shape). */
export type C2bRegistrationResult =
  | { registered: true; apiVersion: 'v2' | 'v1'; error: null }
  | { registered: false; apiVersion: null; error: { type: 'upstream_error'; code: 'c2b_registration_failed'; message: string; param: 'shortcode' } };

export interface C2bPolicyInput {
  c2bSettlesAlone?: boolean;
  c2bUnallocatedAllowed?: boolean;
}

/**
 * Registers the shortcode's confirmation and validation URLs with Daraja's C2B Register URL API
 * (v2, or v1 where v2 is not offered), each carrying a fresh per-shortcode token in its path. The
 * token is never logged nor returned; only its hash is stored, and only once Daraja accepted the
 * URLs holding it: a refusal (production Daraja refuses to re-register URLs that are already
 * registered until they are deleted on its portal) leaves the previously registered URLs working.
 * A refusal does not undo the connection (prompts work without C2B): it is reported beside it.
 */
export async function registerC2bUrls(
  deps: { pool: DatabasePool; publicBaseUrl: string; logger?: Logger },
  who: { storeId: string; environment: Environment },
  c: { baseUrl: string; oauthToken: string; merchant: MpesaMerchant; policy: C2bPolicyInput },
): Promise<C2bRegistrationResult> {
  await setC2bPolicy(deps.pool, who.storeId, who.environment, c.policy);
  const token = newC2bToken();
  const attempt = await tryRegister(deps.publicBaseUrl, who.environment, c, token);
  const log = { storeId: who.storeId, environment: who.environment, shortcode: c.merchant.shortcode };
  if ('problem' in attempt) {
    await saveC2bRegistration(deps.pool, { ...who, shortcode: c.merchant.shortcode, accepted: null, error: attempt.problem });
    deps.logger?.warn({ ...log, problem: attempt.problem }, 'M-Pesa C2B URLs not registered');
    return { registered: false, apiVersion: null, error: { type: 'upstream_error', code: 'c2b_registration_failed', message: attempt.problem, param: 'shortcode' } };
  }
  await saveC2bRegistration(deps.pool, {
    ...who, shortcode: c.merchant.shortcode, accepted: { tokenHash: hashC2bToken(token), apiVersion: attempt.apiVersion, response: attempt.response }, error: null,
  });
  deps.logger?.info({ ...log, apiVersion: attempt.apiVersion }, 'M-Pesa C2B URLs registered');
  return { registered: true, apiVersion: attempt.apiVersion, error: null };
}

async function tryRegister(
  publicBaseUrl: string,
  environment: Environment,
  c: { baseUrl: string; oauthToken: string; merchant: MpesaMerchant },
  token: string,
): Promise<{ apiVersion: 'v2' | 'v1'; response: unknown } | { problem: string }> {
  const word = forbiddenWordIn(publicBaseUrl);
  if (word) return { problem: `PUBLIC_BASE_URL contains "${word}", which Daraja refuses in C2B URLs; paybill payments from the M-Pesa menu cannot be matched until the service is reachable at a URL without it.` };
  if (environment === 'live' && !publicBaseUrl.startsWith('https://')) {
    return { problem: 'Daraja requires https C2B URLs in production; PUBLIC_BASE_URL is not https.' };
  }
  const body: C2bRegisterBody = {
    ShortCode: c.merchant.shortcode,
    ResponseType: c2bResponseType,
    ConfirmationURL: `${publicBaseUrl}${c2bConfirmationPath(token)}`,
    ValidationURL: `${publicBaseUrl}${c2bValidationPath(token)}`,
  };
  try {
    let apiVersion: 'v2' | 'v1' = 'v2';
    let answer: JsonAnswer = await postJson(c.baseUrl, c2bRegisterPathV2, c.oauthToken, body);
    // Where Daraja does not offer v2 it answers 404 "Resource not found": v1 takes the same body.
    if (answer.status === 404 && classifyDarajaError(answer.status, answer.json ?? answer.text).kind !== 'invalid_token') {
      apiVersion = 'v1';
      answer = await postJson(c.baseUrl, c2bRegisterPathV1, c.oauthToken, body);
    }
    const b = answer.json as { ResponseCode?: unknown; ResponseDescription?: unknown } | undefined;
    if (answer.status === 200 && b && String(b.ResponseCode) === '0') return { apiVersion, response: { ResponseCode: String(b.ResponseCode), ResponseDescription: String(b.ResponseDescription ?? '') } };
    const refusal = classifyDarajaError(answer.status, answer.json ?? answer.text);
    return { problem: `Daraja refused to register the C2B URLs: ${refusal.errorCode ? `${refusal.errorCode} ` : ''}${refusal.errorMessage}` };
  } catch (err) {
    return { problem: `Daraja could not be reached to register the C2B URLs (${(err as Error).message}); connect again to retry.` };
  }
}
