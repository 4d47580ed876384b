import type { PaymentMethod } from '../payment-method.js';
import { newAccountRef } from './account-ref.js';

/**
 * M-Pesa's rules. A link is paid by a prompt on the customer's phone (STK Push) and Daraja's
 * callback; the store connects operator credentials (checked by validate-credentials.ts), not a
 * wallet key. Nothing is watched on a chain: the prompt's answer and STK Push Query settle it.
 */
export const mpesaMethod: PaymentMethod = {
  family: 'mpesa',
  receives: 'prompt',
  amountUnit: 'KES',
  walletKey: null,
  takesChainId: false,
  contractProblem: () => 'nothing: M-Pesa has no token contract',
  paymentRequest: () => null,
  checkout: { panel: 'prompt', hint: null },
  ledgerKey: (address) => address,
  watching: null,
  newPayerReference: newAccountRef,
};
