/**
 * Final STK ResultCodes (callback or query) mapped to our own readable reasons. We switch on the
 * code, never on ResultDesc, whose wording varies (research/daraja.md, section 3). ResultCode is a
 * number in callbacks, a string in queries, and sometimes a non-numeric string (SFC_IC0003).
 */
export type FailureCategory = 'customer' | 'limit' | 'merchant_configuration' | 'operator';

export interface ResultReason {
  code: string;
  /** A short, stable label for logs and dashboards. */
  label: string;
  /** A sentence a checkout page can show; ends with the M-Pesa code so support can look it up. */
  reason: string;
  category: FailureCategory;
}

const known: Record<string, [label: string, text: string, category: FailureCategory]> = {
  '1': ['insufficient_funds', 'The M-Pesa balance (and Fuliza) does not cover the amount.', 'customer'],
  '2': ['below_minimum', 'The amount is below the M-Pesa minimum.', 'limit'],
  '3': ['above_maximum', 'The amount is above the M-Pesa maximum for one transaction.', 'limit'],
  '4': ['daily_limit', "The payment would exceed the customer's daily M-Pesa limit.", 'limit'],
  '8': ['merchant_balance_limit', "The payment would exceed the merchant account's maximum balance.", 'limit'],
  '17': ['rule_limited', 'The same amount was just paid from this phone; wait two minutes and try again.', 'customer'],
  '26': ['system_busy', 'M-Pesa is busy; try again shortly.', 'operator'],
  '1001': ['subscriber_busy', 'Another M-Pesa transaction is in progress on this phone; finish it and try again.', 'customer'],
  '1019': ['expired', 'The prompt expired before it was answered.', 'customer'],
  '1025': ['prompt_not_sent', 'M-Pesa could not send the prompt to the phone; try again.', 'operator'],
  '9999': ['prompt_not_sent', 'M-Pesa could not send the prompt to the phone; try again.', 'operator'],
  '1032': ['cancelled', 'The customer cancelled the prompt.', 'customer'],
  '1037': ['unreachable', 'The phone could not be reached or did not answer the prompt in time.', 'customer'],
  '2001': ['wrong_pin', 'The M-Pesa PIN entered was wrong.', 'customer'],
  '2028': ['not_permitted', "The merchant's shortcode is not set up for this kind of payment.", 'merchant_configuration'],
  '8006': ['pin_locked', "The customer's M-Pesa PIN is locked; they must call Safaricom (100 or 200).", 'customer'],
  SFC_IC0003: ['operator_does_not_exist', "The merchant's till or store number is not set up correctly.", 'merchant_configuration'],
};

/** The code as a metric label: `0`, a code of the table above, or `other` (a label's values must stay few). */
export function resultCodeLabel(code: number | string): string {
  const key = String(code).trim();
  return key === '0' || known[key] ? key : 'other';
}

export function isSuccessCode(code: number | string): boolean {
  return String(code).trim() === '0';
}

export function resultReason(code: number | string, resultDesc?: string): ResultReason {
  const key = String(code).trim();
  const entry = known[key];
  if (entry) return { code: key, label: entry[0], reason: `${entry[1]} (M-Pesa ${key})`, category: entry[2] };
  const desc = (resultDesc ?? '').replace(/\s+/g, ' ').trim().slice(0, 200);
  return { code: key, label: 'failed', reason: `M-Pesa did not complete the payment${desc ? `: ${desc}` : ''} (M-Pesa ${key})`, category: 'operator' };
}
