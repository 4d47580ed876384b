/** What a stored callback says about a receipt (a row of mpesa_callbacks). */
export interface ReceiptClaim {
  id: string;
  receipt: string | null;
  amount_kes: string | null;
  suspicious_reason: string | null;
}

/**
 * Success callbacks that name a receipt and the prompt's amount and were not found suspicious.
 * Callbacks are unsigned, so a receipt is shown only when they all agree on it; otherwise the
 * CheckoutRequestID stands in (the STK query, which decides the payment, carries no receipt).
 */
export function believableReceipts<C extends ReceiptClaim>(callbacks: C[], amountKes: string): C[] {
  return callbacks.filter((c) => c.receipt && c.amount_kes === amountKes && c.suspicious_reason === null);
}

/** Two believable callbacks name different receipts: one is forged, and nothing says which. */
export const receiptsDisagree = (candidates: ReceiptClaim[]): boolean => new Set(candidates.map((c) => c.receipt)).size > 1;

export const disputedReceipt = 'names another receipt than a second callback of the prompt';
