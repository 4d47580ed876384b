import { readFileSync } from 'node:fs';

/**
 * Daraja's documented bodies (fixtures/, copied from research/daraja.md's sources, several
 * verbatim from Safaricom's pages) used as templates: the emulator changes only the values a real
 * answer would carry (ids, amounts, dates), never the shape.
 */
function fixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}.json`, import.meta.url), 'utf8')) as T;
}

export type CallbackResult = 'success' | 'cancelled' | 'wrong_pin' | 'insufficient' | 'timeout';

const callbackFixtures: Record<CallbackResult, string> = {
  success: 'callback-success',
  cancelled: 'callback-cancelled',
  wrong_pin: 'callback-wrong-pin',
  insufficient: 'callback-insufficient',
  timeout: 'callback-timeout',
};

interface CallbackBody {
  Body: {
    stkCallback: {
      MerchantRequestID: string;
      CheckoutRequestID: string;
      ResultCode: number | string;
      ResultDesc: string;
      CallbackMetadata?: { Item: { Name: string; Value?: number | string }[] };
    };
  };
}

export interface SettledPrompt {
  merchantRequestId: string;
  checkoutRequestId: string;
  amount: number;
  phone: string;
  receipt: string;
  /** YYYYMMDDHHmmss, Kenyan time. */
  transactionDate: string;
}

/** A callback body for a settled prompt; `override` forces a code (till misconfiguration, for example). */
export function callbackBody(result: CallbackResult, p: SettledPrompt, override?: { code: number | string; desc: string }): CallbackBody {
  const body = fixture<CallbackBody>(callbackFixtures[result]);
  const cb = body.Body.stkCallback;
  cb.MerchantRequestID = p.merchantRequestId;
  cb.CheckoutRequestID = p.checkoutRequestId;
  if (override) {
    cb.ResultCode = override.code;
    cb.ResultDesc = override.desc;
    delete cb.CallbackMetadata;
    return body;
  }
  for (const item of cb.CallbackMetadata?.Item ?? []) {
    // Daraja sends these as numbers (Amount as a decimal, TransactionDate and PhoneNumber as integers).
    if (item.Name === 'Amount') item.Value = p.amount;
    if (item.Name === 'MpesaReceiptNumber') item.Value = p.receipt;
    if (item.Name === 'TransactionDate') item.Value = Number(p.transactionDate);
    if (item.Name === 'PhoneNumber') item.Value = Number(p.phone);
  }
  return body;
}

export function resultOf(body: CallbackBody): { code: string; desc: string } {
  return { code: String(body.Body.stkCallback.ResultCode), desc: body.Body.stkCallback.ResultDesc };
}

/** An error body `{requestId, errorCode, errorMessage}` in the documented shape. */
export function errorBody(requestId: string, errorCode: string, errorMessage: string): Record<string, string> {
  return { requestId, errorCode, errorMessage };
}

export function oauthBody(token: string, expiresInSeconds: number): Record<string, string> {
  // The live API sends expires_in as a string (research/daraja.md, section 1).
  return { ...fixture('oauth-success'), access_token: token, expires_in: String(expiresInSeconds) };
}

export function pushAcceptedBody(merchantRequestId: string, checkoutRequestId: string): Record<string, string> {
  return { ...fixture<Record<string, string>>('stkpush-success-response'), MerchantRequestID: merchantRequestId, CheckoutRequestID: checkoutRequestId };
}

export function queryResultBody(merchantRequestId: string, checkoutRequestId: string, code: string, desc: string): Record<string, string> {
  return { ...fixture<Record<string, string>>('stkquery-success'), MerchantRequestID: merchantRequestId, CheckoutRequestID: checkoutRequestId, ResultCode: code, ResultDesc: desc };
}

export function queryPendingBody(checkoutRequestId: string): Record<string, string> {
  // The documented pending answer carries the CheckoutRequestID as its requestId.
  return { ...fixture<Record<string, string>>('stkquery-pending-error'), requestId: checkoutRequestId };
}
