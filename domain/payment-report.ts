import type { RailId } from './rails.js';

/** One payment as reported by a rail adapter. `key` identifies it: `<txHash>:<logIndex>` or a receipt. */
export interface PaymentReport {
  rail: RailId;
  key: string;
  /** Transaction hash or M-Pesa receipt (MpesaReceiptNumber). */
  externalId: string;
  /** Sender address or payer phone number. */
  payer: string | null;
  /** Amount in the rail's smallest unit (BSC USDT 18 decimals, others 6; KES whole shillings). */
  amountMinor: string;
  decimals: number;
  blockNumber?: number;
  /** ISO time the rail reported the confirmation (for CONFIRMED links' `confirmedAt`). */
  at?: string;
  simulated?: boolean;
}
