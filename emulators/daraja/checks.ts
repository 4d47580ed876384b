/**
 * The request checks a real Daraja makes, written independently of Malipo's own M-Pesa code (so
 * a bug there cannot agree with itself here). Each failure is the documented
 * `400.002.02 "Bad Request - Invalid <Field>"` or `500.001.1001` answer.
 */
export interface Refusal {
  status: number;
  errorCode: string;
  errorMessage: string;
}

const invalid = (field: string): Refusal => ({ status: 400, errorCode: '400.002.02', errorMessage: `Bad Request - Invalid ${field}` });
export const wrongCredentials: Refusal = { status: 500, errorCode: '500.001.1001', errorMessage: 'Wrong credentials' };
export const merchantDoesNotExist: Refusal = { status: 500, errorCode: '500.001.1001', errorMessage: 'Merchant does not exist' };
export const subscriberLocked: Refusal = {
  status: 500,
  errorCode: '500.001.1001',
  errorMessage: 'Unable to lock subscriber, a transaction is already in process for the current subscriber',
};
export const invalidToken: Refusal = { status: 404, errorCode: '404.001.03', errorMessage: 'Invalid Access Token' };
export const spikeArrest: Refusal = { status: 500, errorCode: '500.003.02', errorMessage: 'Error Occurred: Spike Arrest Violation' };
export const unknownCheckoutRequest = invalid('CheckoutRequestID');

/** BusinessShortCode may be a number or a string in JSON; both are accepted by Daraja. */
export const asText = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : null);
const msisdn = /^254\d{9}$/;

/** Kenyan wall-clock time via the IANA zone (Malipo itself uses a fixed +3 offset: two methods, one answer). */
export function nairobiNow(now: Date): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Africa/Nairobi', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
  }).formatToParts(now);
  const get = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${get('year')}${get('month')}${get('day')}${get('hour')}${get('minute')}${get('second')}`;
}

function timestampSeconds(ts: string): number {
  const [y, mo, d, h, mi, s] = [ts.slice(0, 4), ts.slice(4, 6), ts.slice(6, 8), ts.slice(8, 10), ts.slice(10, 12), ts.slice(12, 14)].map(Number) as number[];
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) / 1000;
}

/** YYYYMMDDHHmmss, and (the emulator's rule; Daraja publishes no window) within `toleranceSeconds` of Kenyan time. */
export function checkTimestamp(value: unknown, now: Date, toleranceSeconds: number): Refusal | null {
  if (typeof value !== 'string' || !/^\d{14}$/.test(value)) return invalid('Timestamp');
  const skew = Math.abs(timestampSeconds(value) - timestampSeconds(nairobiNow(now)));
  return Number.isNaN(skew) || skew > toleranceSeconds ? invalid('Timestamp') : null;
}

export function checkPassword(password: unknown, shortCode: string, passkey: string, timestamp: string): boolean {
  if (typeof password !== 'string') return false;
  const decoded = Buffer.from(password, 'base64').toString('utf8');
  return decoded === shortCode + passkey + timestamp;
}

export interface PushFields {
  shortCode: string;
  transactionType: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  amount: number;
  partyA: string;
  partyB: string;
  phone: string;
  callbackUrl: string;
}

/** The field checks of POST /mpesa/stkpush/v1/processrequest, in the order of the documented table. */
export function checkPushFields(b: Record<string, unknown>): Refusal | PushFields {
  const shortCode = asText(b.BusinessShortCode);
  if (!shortCode || !/^\d{5,7}$/.test(shortCode)) return invalid('BusinessShortCode');
  if (b.TransactionType !== 'CustomerPayBillOnline' && b.TransactionType !== 'CustomerBuyGoodsOnline') return invalid('TransactionType');
  const amountText = asText(b.Amount);
  // Whole shillings only; 1 to 250,000 per transaction.
  if (!amountText || !/^\d+$/.test(amountText) || Number(amountText) < 1 || Number(amountText) > 250_000) return invalid('Amount');
  const partyA = asText(b.PartyA);
  if (!partyA || !msisdn.test(partyA)) return invalid('PartyA');
  const partyB = asText(b.PartyB);
  if (!partyB || !/^\d{5,7}$/.test(partyB)) return invalid('PartyB');
  const phone = asText(b.PhoneNumber);
  if (!phone || !msisdn.test(phone)) return invalid('PhoneNumber');
  if (typeof b.CallBackURL !== 'string' || /\s/.test(b.CallBackURL) || !isHttpUrl(b.CallBackURL)) return invalid('CallBackURL');
  if (b.AccountReference === null || b.AccountReference === undefined || b.TransactionDesc === null || b.TransactionDesc === undefined) {
    return invalid('Remarks');
  }
  if (typeof b.AccountReference !== 'string' || !/^[A-Za-z0-9]{1,12}$/.test(b.AccountReference)) return invalid('AccountReference');
  if (typeof b.TransactionDesc !== 'string' || b.TransactionDesc.length < 1 || b.TransactionDesc.length > 13) return invalid('TransactionDesc');
  return { shortCode, transactionType: b.TransactionType, amount: Number(amountText), partyA, partyB, phone, callbackUrl: b.CallBackURL };
}

/** Real Daraja wants a public https URL; the emulator also takes http so it can call a local service. */
function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

export function isRefusal(x: Refusal | object): x is Refusal {
  return 'errorCode' in x;
}
