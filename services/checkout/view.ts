import type { Environment } from '../../domain/environment.js';
import type { RailRecord } from '../../domain/rails.js';
import type { LinkStatus } from '../../domain/states.js';

/** One way to pay on the checkout: the rail's facts, where to send, and its QR code. */
export interface CheckoutRail extends RailRecord {
  /** Test mode without a test token: only a simulated payment completes it (no QR code). */
  simulatedOnly?: true;
  address: string | null;
  payUri: string | null;
  qrUrl: string | null;
}

/**
 * What the hosted checkout shows a customer: amounts, where to pay, and the state. Nothing the
 * merchant keeps for itself (merchantRef, metadata, the address index) is in it.
 */
export interface CheckoutView {
  id: string;
  status: LinkStatus;
  environment: Environment;
  storeName: string;
  description: string | null;
  usdtAmount: string;
  mobileMoneyAmount: number | null;
  mobileMoneyShortcode: string | null;
  expiresAt: string;
  confirmedRail: string | null;
  confirmedAt: string | null;
  amountReceived: string;
  /** The customer's own M-Pesa receipt (also in their SMS): what a confirmed M-Pesa checkout shows. */
  mobileMoneyReceipt: string | null;
  redirectUrl: string | null;
  rails: CheckoutRail[];
}
