import type { Environment } from '../../domain/environment.js';
import type { RailRecord } from '../../domain/rails.js';
import type { LinkStatus } from '../../domain/states.js';

/** One way to pay on the checkout: the rail's facts, where to send, and its QR code. */
export interface CheckoutRail extends RailRecord {
  /** Test mode without a test token: only a simulated payment completes it (no QR code). */
  simulatedOnly?: true;
  address: string | null;
  /**
   * What the QR code carries: an EIP-681 token transfer (EVM rails), a Solana Pay transfer
   * request, or the bare address (TRON, whose wallets honour no payment URI). Null without a QR.
   */
  payUri: string | null;
  /** A link a wallet app opens ("Open in wallet"): the EIP-681 or Solana Pay URI; null for TRON. */
  walletUri: string | null;
  /** EVM rails: the chain id the wallet URI names (docs/checkout.md). */
  chainId: number | null;
  /** The USDT contract (or SPL mint) the customer must send; null for M-Pesa and simulated-only rails. */
  tokenContract: string | null;
  qrUrl: string | null;
}

/** A deposit seen on chain and not yet final: how deep it is, and how deep it must get. */
export interface CheckoutDeposit {
  rail: string;
  /** USDT decimal string. */
  amount: string;
  txHash: string;
  /** Blocks on top of (and including) the deposit's block; null where the chain has no such count. */
  confirmations: number | null;
  /** The configured depth; null when the chain's own finality decides (EVM `finalized`, TRON, Solana). */
  requiredConfirmations: number | null;
}

/** The latest M-Pesa prompt of a link that is not paid: open on the phone, or failed. */
export interface CheckoutMobileMoneyAttempt {
  state: 'waiting' | 'failed';
  /** The last three digits of the phone prompted (the rest stays private). */
  phoneEnding: string | null;
  /** Why it failed: an M-Pesa result code ('1032'), 'no_outcome' or 'unknown'; the page words it. */
  failureCode: string | null;
}

/**
 * What the hosted checkout shows a customer: amounts, where to pay, and the state. Nothing the
 * merchant keeps for itself (merchantRef, metadata, the address index, the payer) is in it.
 */
export interface CheckoutMenuPayment {
  /** A paybill takes the account number; a till (Buy Goods) takes none and is matched by amount. */
  kind: 'paybill' | 'till';
  shortcode: string;
  accountRef: string;
  /** Whole KES still due. */
  amountDue: number;
}

export interface CheckoutView {
  id: string;
  status: LinkStatus;
  environment: Environment;
  storeName: string;
  /** The store's logo, served by us under its content hash (the settings page uploads it); null without one. */
  storeLogoUrl?: string | null;
  description: string | null;
  usdtAmount: string;
  /** USDT still to pay: the amount less confirmed payments (what an underpaid customer sends). */
  amountDue: string;
  mobileMoneyAmount: number | null;
  mobileMoneyShortcode: string | null;
  /**
   * Paying from the M-Pesa menu instead of answering a prompt (Lipa na M-Pesa → Paybill): the
   * business number, the link's account number and the KES still due. Only for an open link of a
   * store whose paybill has its C2B URLs registered with Daraja; null otherwise (a till payment
   * carries no account number to match it by, docs/mobile-money.md).
   */
  mobileMoneyMenu?: CheckoutMenuPayment | null;
  /** Whether a prompt pays a paybill or a till (Buy Goods): the page names which. */
  mobileMoneyShortcodeType?: 'paybill' | 'till' | null;
  expiresAt: string;
  confirmedRail: string | null;
  confirmedAt: string | null;
  /** The paying transaction: the M-Pesa receipt or the on-chain transaction hash. */
  confirmedReference: string | null;
  amountReceived: string;
  /** The customer's own M-Pesa receipt (also in their SMS): what a confirmed M-Pesa checkout shows. */
  mobileMoneyReceipt: string | null;
  redirectUrl: string | null;
  deposit: CheckoutDeposit | null;
  mobileMoney: CheckoutMobileMoneyAttempt | null;
  rails: CheckoutRail[];
}
