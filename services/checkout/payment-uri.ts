import { methodOf } from '../../rails/methods.js';
import type { PaymentRequestInput, RailPaymentRequest } from '../../rails/payment-method.js';
import type { RailSettings } from '../../rails/settings.js';

export type { PaymentRequestInput, RailPaymentRequest };

/**
 * The payment request a wallet reads for one rail (docs/checkout.md, "Wallet URIs"), as the rail's
 * payment method builds it: an EIP-681 USDT transfer on the EVM chains (rails/evm/method.ts), the
 * Solana Pay transfer request with the link's reference (rails/solana/method.ts), the bare address
 * on TRON (rails/tron/method.ts); none for a prompted rail. Pure: the token contract and chain id
 * come from the rail settings (an operator may override them).
 */
export function railPaymentRequest(rails: RailSettings, p: PaymentRequestInput): RailPaymentRequest | null {
  return methodOf(p.rail).paymentRequest(rails, p);
}
