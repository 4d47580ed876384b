import { z } from 'zod/v4';
import { isSuccessCode, resultReason } from './result-codes.js';
import { parseDarajaTimestamp } from './time.js';

/**
 * The STK callback Daraja POSTs to our CallBackURL (research/daraja.md, section 3), validated
 * strictly: the documented envelope and nothing else. Values inside CallbackMetadata may be
 * numbers or strings (wrappers stringify them) and Balance often comes without a Value.
 */
const metadataItem = z.strictObject({
  Name: z.string().min(1).max(64),
  Value: z.union([z.number(), z.string().max(200)]).optional(),
});

export const stkCallbackSchema = z
  .strictObject({
    Body: z.strictObject({
      stkCallback: z.strictObject({
        MerchantRequestID: z.string().min(1).max(100),
        CheckoutRequestID: z.string().min(1).max(100),
        ResultCode: z.union([z.number().int(), z.string().min(1).max(40)]),
        ResultDesc: z.string().max(500),
        CallbackMetadata: z.strictObject({ Item: z.array(metadataItem).max(20) }).optional(),
      }),
    }),
  })
  .meta({ id: 'MpesaStkCallback' });

export type StkCallback = z.infer<typeof stkCallbackSchema>;

export type CallbackOutcome =
  | { kind: 'success'; receipt: string; amountKes: string; phone: string | null; transactionAt: string | null }
  | { kind: 'failure'; resultCode: string; reason: string }
  /** ResultCode 0 without a usable receipt or amount: not proof of payment; the workflow's query decides. */
  | { kind: 'unconfirmed'; problem: string };

export interface InterpretedCallback {
  merchantRequestId: string;
  checkoutRequestId: string;
  resultCode: string;
  resultDesc: string;
  outcome: CallbackOutcome;
}

export function interpretCallback(body: StkCallback): InterpretedCallback {
  const cb = body.Body.stkCallback;
  const base = {
    merchantRequestId: cb.MerchantRequestID,
    checkoutRequestId: cb.CheckoutRequestID,
    resultCode: String(cb.ResultCode).trim(),
    resultDesc: cb.ResultDesc,
  };
  if (!isSuccessCode(cb.ResultCode)) {
    return { ...base, outcome: { kind: 'failure', resultCode: base.resultCode, reason: resultReason(cb.ResultCode, cb.ResultDesc).reason } };
  }
  return { ...base, outcome: successOutcome(cb.CallbackMetadata?.Item ?? []) };
}

function successOutcome(items: { Name: string; Value?: number | string | undefined }[]): CallbackOutcome {
  // Items are looked up by name, never by position.
  const value = (name: string) => items.find((i) => i.Name === name)?.Value;
  const receipt = value('MpesaReceiptNumber');
  if (typeof receipt !== 'string' || !/^[A-Z0-9]{6,20}$/.test(receipt)) return { kind: 'unconfirmed', problem: 'no MpesaReceiptNumber' };
  const amountKes = wholeShillings(value('Amount'));
  if (amountKes === null) return { kind: 'unconfirmed', problem: 'Amount missing or not whole shillings' };
  const phone = value('PhoneNumber');
  const date = value('TransactionDate');
  const at = date === undefined ? null : parseDarajaTimestamp(date);
  return {
    kind: 'success',
    receipt,
    amountKes,
    phone: phone === undefined ? null : String(phone),
    transactionAt: at ? at.toISOString() : null,
  };
}

/** `1`, `1.00`, `"1.00"` → "1"; fractions of a shilling or anything else → null. */
export function wholeShillings(value: number | string | undefined): string | null {
  if (value === undefined) return null;
  const text = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : '') : value.trim();
  const m = /^(\d{1,9})(?:\.0{1,2})?$/.exec(text);
  if (!m) return null;
  const n = m[1]!.replace(/^0+(?=\d)/, '');
  return n === '0' ? null : n;
}
