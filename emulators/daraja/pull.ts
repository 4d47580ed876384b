import { randomBytes } from 'node:crypto';
import type { C2bPayment } from './c2b.js';
import type { EmulatorMerchant } from './state.js';
import { newRequestId } from './state.js';
import { errorBody } from './templates.js';

/**
 * Daraja's Pull Transactions API, as the emulator speaks it: a one-time register of the
 * shortcode, then queries of the C2B payments it received within the last 48 hours (those whose
 * confirmation was delivered and those whose confirmation was dropped alike), paged by
 * OffSetValue. Dates are `YYYY-MM-DD HH:mm:ss` in Kenyan time (UTC+3).
 */
export const pullReachMs = 48 * 60 * 60 * 1000;

export interface PullRegistration {
  shortCode: string;
  nominatedNumber: string;
  callbackUrl: string;
}

const refusal = (status: number, code: string, message: string) => ({ status, body: errorBody(newRequestId(), code, message) });
const eatOffsetMs = 3 * 60 * 60 * 1000;

/** `YYYY-MM-DD HH:mm:ss` (Kenyan time) as a Date, or null. */
export function parsePullDate(value: unknown): Date | null {
  const m = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(value) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s) - eatOffsetMs;
  const back = new Date(ms + eatOffsetMs);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || back.getUTCHours() !== h) return null;
  return new Date(ms);
}

export function formatPullDate(at: Date): string {
  const eat = new Date(at.getTime() + eatOffsetMs);
  return eat.toISOString().slice(0, 19).replace('T', ' ');
}

/** POST /pulltransactions/v1/register {ShortCode, RequestType: "Pull", NominatedNumber, CallBackURL}. */
export function registerPull(merchants: EmulatorMerchant[], registrations: Map<string, PullRegistration>, b: Record<string, unknown>): { status: number; body: unknown } {
  const shortCode = typeof b.ShortCode === 'string' || typeof b.ShortCode === 'number' ? String(b.ShortCode) : '';
  if (!/^\d{5,7}$/.test(shortCode)) return refusal(400, '400.002.02', 'Bad Request - Invalid ShortCode');
  if (!merchants.some((m) => m.shortCode === shortCode || (m.tills ?? []).includes(shortCode))) return refusal(500, '500.003.1001', 'Merchant does not exist');
  if (b.RequestType !== 'Pull') return refusal(400, '400.002.02', 'Bad Request - Invalid RequestType');
  if (!/^(254|0)7\d{8}$|^(254|0)1\d{8}$/.test(String(b.NominatedNumber ?? ''))) return refusal(400, '400.002.02', 'Bad Request - Invalid NominatedNumber');
  let url: URL | null = null;
  try {
    url = typeof b.CallBackURL === 'string' ? new URL(b.CallBackURL) : null;
  } catch {
    url = null;
  }
  if (!url || !/^https?:$/.test(url.protocol)) return refusal(400, '400.002.02', 'Bad Request - Invalid CallBackURL');
  registrations.set(shortCode, { shortCode, nominatedNumber: String(b.NominatedNumber), callbackUrl: url.toString() });
  return {
    status: 200,
    body: { ResponseRefID: `${randomBytes(4).toString('hex')}-${newRequestId()}`, ResponseStatus: '1000', ShortCode: shortCode, ResponseDescription: `ShortCode ${shortCode} Registered Successfully` },
  };
}

/** One pulled record, as Daraja's query lists it. */
export function pulledRecord(p: C2bPayment, organizationName: string): Record<string, string> {
  const c = p.confirmation;
  return {
    transactionId: p.transId,
    trxDate: formatPullDate(new Date(p.paidAtMs)),
    msisdn: c.MSISDN ?? '',
    sender: 'MPESA',
    transactiontype: p.commandId === 'CustomerBuyGoodsOnline' ? 'c2b-buy-goods-debit' : 'c2b-pay-bill-debit',
    billreference: p.billRef,
    amount: String(Number(p.amount)),
    organizationname: organizationName,
  };
}

/**
 * POST /pulltransactions/v1/query {ShortCode, StartDate, EndDate, OffSetValue}: the completed C2B
 * payments of the shortcode within [StartDate, EndDate], oldest first, `pageSize` from
 * OffSetValue. A StartDate beyond the 48-hour reach is refused; so is an unregistered shortcode.
 */
export function queryPull(
  registrations: Map<string, PullRegistration>,
  payments: readonly C2bPayment[],
  b: Record<string, unknown>,
  now: Date,
  pageSize: number,
): { status: number; body: unknown } {
  const shortCode = typeof b.ShortCode === 'string' || typeof b.ShortCode === 'number' ? String(b.ShortCode) : '';
  if (!/^\d{5,7}$/.test(shortCode)) return refusal(400, '400.002.02', 'Bad Request - Invalid ShortCode');
  if (!registrations.has(shortCode)) return refusal(400, '400.002.02', `Bad Request - ShortCode ${shortCode} is not registered for Pull Transactions`);
  const start = parsePullDate(b.StartDate);
  const end = parsePullDate(b.EndDate);
  if (!start) return refusal(400, '400.002.02', 'Bad Request - Invalid StartDate');
  if (!end || end < start) return refusal(400, '400.002.02', 'Bad Request - Invalid EndDate');
  if (start.getTime() < now.getTime() - pullReachMs) return refusal(400, '400.002.02', 'Bad Request - StartDate is beyond the 48 hours Pull Transactions reaches');
  const offset = Number(b.OffSetValue ?? 0);
  if (!Number.isInteger(offset) || offset < 0) return refusal(400, '400.002.02', 'Bad Request - Invalid OffSetValue');
  // Dates have whole seconds: a payment is within the window by its second, as M-Pesa lists it.
  const second = (p: C2bPayment) => Math.floor(p.paidAtMs / 1000) * 1000;
  const within = payments
    .filter((p) => p.shortCode === shortCode && p.outcome === 'completed' && second(p) >= start.getTime() && second(p) <= end.getTime() && p.paidAtMs >= now.getTime() - pullReachMs)
    .sort((x, y) => x.paidAtMs - y.paidAtMs);
  const page = within.slice(offset, offset + pageSize).map((p) => pulledRecord(p, `Shortcode ${shortCode}`));
  return { status: 200, body: { ResponseRefID: `${randomBytes(4).toString('hex')}-${newRequestId()}`, ResponseCode: '1000', ResponseMessage: 'Success', Response: [page] } };
}
