import { createHash } from 'node:crypto';
import { z } from 'zod/v4';
import { randomToken } from '../../domain/ids.js';

/**
 * Daraja's C2B (customer to business) wire formats: paybill and till payments a customer makes
 * from the M-Pesa menu, which Daraja posts to the URLs registered for the shortcode
 * (research: Daraja "C2B Register URL" v1/v2). Pure: no I/O here.
 */
export const c2bRegisterPathV2 = '/mpesa/c2b/v2/registerurl';
export const c2bRegisterPathV1 = '/mpesa/c2b/v1/registerurl';

/** Our URLs for one shortcode: the token is their only credential (stored hashed). */
export const c2bConfirmationPath = (token: string) => `/v1/callbacks/c2b/${token}/confirmation`;
export const c2bValidationPath = (token: string) => `/v1/callbacks/c2b/${token}/validation`;

/**
 * Daraja refuses URLs containing these words (its Register URL rules name M-Pesa, Safaricom,
 * exe, exec, cmd, SQL, query "or any similar words"), case-insensitively.
 */
const forbiddenUrlWords = ['mpesa', 'm-pesa', 'm_pesa', 'safaricom', 'exe', 'cmd', 'sql', 'query'];

/** The first forbidden word the URL holds, or null. */
export function forbiddenWordIn(url: string): string | null {
  const lower = url.toLowerCase();
  return forbiddenUrlWords.find((w) => lower.includes(w)) ?? null;
}

/** A fresh per-shortcode token (40 characters, ~206 bits) that spells none of the forbidden words. */
export function newC2bToken(): string {
  for (;;) {
    const token = randomToken(40);
    if (!forbiddenWordIn(token)) return token;
  }
}

export const hashC2bToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * What M-Pesa does when our validation URL cannot be reached: 'Completed' lets the payment
 * through (it then arrives as an unallocated or matched confirmation), 'Cancelled' refuses it.
 * Completed: a customer's payment never fails because our service was briefly down.
 */
export const c2bResponseType = 'Completed';

export interface C2bRegisterBody {
  ShortCode: string;
  ResponseType: 'Completed' | 'Cancelled';
  ConfirmationURL: string;
  ValidationURL: string;
}

/** Daraja sends every field as a string in its samples; numbers are seen too. */
const text = z.union([z.string(), z.number()]).transform((v) => String(v));
const optionalText = text.optional().nullable();

/**
 * The body Daraja posts to the validation and confirmation URLs. Unknown fields are kept (Daraja
 * has added fields over time); the ones we act on must be there.
 */
export const c2bPostSchema = z.looseObject({
  TransactionType: optionalText,
  TransID: text.pipe(z.string().regex(/^[A-Z0-9]{6,20}$/)),
  TransTime: optionalText,
  TransAmount: text.pipe(z.string().regex(/^\d{1,9}(\.\d{1,2})?$/)),
  BusinessShortCode: text.pipe(z.string().regex(/^\d{5,7}$/)),
  BillRefNumber: optionalText,
  InvoiceNumber: optionalText,
  OrgAccountBalance: optionalText,
  ThirdPartyTransID: optionalText,
  MSISDN: optionalText,
  FirstName: optionalText,
  MiddleName: optionalText,
  LastName: optionalText,
});
export type C2bPost = z.infer<typeof c2bPostSchema>;

/**
 * A till (Buy Goods) payment, by its transaction type as a confirmation ("Buy Goods",
 * "CustomerBuyGoodsOnline") or Pull Transactions ("c2b-buy-goods-debit") names it. It carries no
 * account number.
 */
export const isBuyGoods = (transactionType: string | null | undefined): boolean => /buy[-\s]*goods/i.test(transactionType ?? '');

/**
 * TransAmount in whole shillings (M-Pesa moves whole shillings: "10" or "10.00"), or null when it
 * carries cents, which no genuine confirmation does.
 */
export function wholeShillings(transAmount: string): string | null {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(transAmount);
  if (!m || (m[2] !== undefined && Number(m[2]) !== 0)) return null;
  return String(BigInt(m[1]!));
}

/** The payer's name as Daraja gives it (the phone is masked or hashed by Daraja itself). */
export const payerName = (p: C2bPost): string | null =>
  [p.FirstName, p.MiddleName, p.LastName].filter((s): s is string => !!s && s.trim() !== '').join(' ').trim() || null;

/**
 * What identifies a confirmation's content: two posts with the same TransID and fingerprint are
 * one payment told twice; the same TransID with another fingerprint is an altered post.
 */
export function c2bFingerprint(p: C2bPost): string {
  const fields = [p.TransID, wholeShillings(p.TransAmount) ?? p.TransAmount, p.BusinessShortCode, p.BillRefNumber ?? '', p.TransTime ?? ''];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

/** The key a C2B payment is counted under in a link's payments (beside prompts' CheckoutRequestIDs). */
export const c2bPaymentKeyPrefix = 'c2b:';
export const c2bPaymentKey = (shortcode: string, transId: string) => `${c2bPaymentKeyPrefix}${shortcode}:${transId}`;
export function parseC2bPaymentKey(key: string): { shortcode: string; transId: string } | null {
  const m = /^c2b:(\d{5,7}):([A-Z0-9]{6,20})$/.exec(key);
  return m ? { shortcode: m[1]!, transId: m[2]! } : null;
}

/** Validation answers (Daraja's documented result codes). */
export const c2bAccept = { ResultCode: '0', ResultDesc: 'Accepted' } as const;
/** C2B00012: "Invalid Account number": M-Pesa refuses the payment and the customer keeps the money. */
export const c2bRejectAccount = { ResultCode: 'C2B00012', ResultDesc: 'Rejected' } as const;
/** The confirmation acknowledgement. */
export const c2bAcknowledge = { ResultCode: '0', ResultDesc: 'Accepted' } as const;
