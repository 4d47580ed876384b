import { businessShortCode, transactionType, type MpesaMerchant, type TransactionType } from './merchant.js';
import { stkPassword } from './password.js';
import { darajaTimestamp } from './time.js';

/** Daraja's limits (research/daraja.md, section 2). */
export const accountReferenceMaxLength = 12;
export const transactionDescMaxLength = 13;
export const maxAmountKes = 250_000;

/** The M-Pesa Express (STK push) request body, field names exactly as Daraja spells them. */
export interface StkPushBody {
  BusinessShortCode: string;
  Password: string;
  Timestamp: string;
  TransactionType: TransactionType;
  Amount: string;
  PartyA: string;
  PartyB: string;
  PhoneNumber: string;
  CallBackURL: string;
  AccountReference: string;
  TransactionDesc: string;
}

export interface StkQueryBody {
  BusinessShortCode: string;
  Password: string;
  Timestamp: string;
  CheckoutRequestID: string;
}

export interface StkPushInput {
  merchant: MpesaMerchant;
  passkey: string;
  now: Date;
  amountKes: number;
  phoneNumber: string;
  callbackUrl: string;
  accountReference: string;
  description: string;
}

export function buildStkPushBody(input: StkPushInput): StkPushBody {
  const { merchant, amountKes } = input;
  if (!Number.isSafeInteger(amountKes) || amountKes < 1 || amountKes > maxAmountKes) {
    throw new RangeError(`M-Pesa takes whole shillings from 1 to ${maxAmountKes}; got ${amountKes}.`);
  }
  const shortCode = businessShortCode(merchant);
  const timestamp = darajaTimestamp(input.now);
  return {
    BusinessShortCode: shortCode,
    Password: stkPassword(shortCode, input.passkey, timestamp),
    Timestamp: timestamp,
    TransactionType: transactionType(merchant),
    Amount: String(amountKes),
    PartyA: input.phoneNumber,
    // A till is credited at the till number; a paybill at itself.
    PartyB: merchant.shortcode,
    PhoneNumber: input.phoneNumber,
    CallBackURL: input.callbackUrl,
    AccountReference: accountReference(input.accountReference),
    TransactionDesc: transactionDesc(input.description),
  };
}

export function buildStkQueryBody(merchant: MpesaMerchant, passkey: string, now: Date, checkoutRequestId: string): StkQueryBody {
  const shortCode = businessShortCode(merchant);
  const timestamp = darajaTimestamp(now);
  return { BusinessShortCode: shortCode, Password: stkPassword(shortCode, passkey, timestamp), Timestamp: timestamp, CheckoutRequestID: checkoutRequestId };
}

/**
 * AccountReference is shown in the customer's prompt: alphanumeric, at most 12 characters.
 * Special characters are reported to break requests, and null is refused, so anything else is
 * stripped and an empty result falls back to a neutral word.
 */
export function accountReference(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9]/g, '').slice(0, accountReferenceMaxLength);
  return cleaned || 'Payment';
}

/** TransactionDesc: at most 13 characters and never empty (an empty one is "Invalid Remarks"). */
export function transactionDesc(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9 ]/g, '').replace(/\s+/g, ' ').trim().slice(0, transactionDescMaxLength).trim();
  return cleaned || 'Payment';
}
