import type { RailId, UsdtRail } from '../domain/rails.js';
import { evmMethod } from './evm/method.js';
import { mpesaMethod } from './mpesa/method.js';
import type { WalletSlot } from '../db/wallet-repo.js';
import type { Family, PaymentMethod, WalletKey } from './payment-method.js';
import { isRailId, railFacts } from './registry.js';
import { solanaMethod } from './solana/method.js';
import { tronMethod } from './tron/method.js';

/**
 * Each rail family's payment method (the pure rules, rails/payment-method.ts). A rail finds its
 * method through its facts' family. Not for workflows: methods use Node's crypto (Solana Pay
 * references, xpub derivation); workflows read rails/registry.ts only. A family registered at boot
 * (rails/register.ts) is added here.
 */
export const paymentMethods: Readonly<Record<Family, PaymentMethod>> = {
  mpesa: mpesaMethod,
  tron: tronMethod,
  evm: evmMethod,
  solana: solanaMethod,
};

/** Adds a family's method (rails/register.ts); a family keeps the one it was first given. */
export function addPaymentMethod(method: PaymentMethod): void {
  const known = paymentMethods[method.family];
  if (known && known !== method) throw new Error(`the family ${method.family} has another payment method already`);
  (paymentMethods as Record<Family, PaymentMethod>)[method.family] = method;
}

export const methodOf = (rail: RailId): PaymentMethod => paymentMethods[railFacts[rail].family]!;

/** The payment method whose store key fills a wallet slot (each slot is one family's; the first family registered for it). */
export function methodOfWalletSlot(slot: WalletSlot): PaymentMethod & { walletKey: WalletKey } {
  const method = Object.values(paymentMethods).find((m) => m.walletKey?.slot === slot);
  if (!method?.walletKey) throw new Error(`no payment method takes the wallet slot ${slot}`);
  return method as PaymentMethod & { walletKey: WalletKey };
}

/** Whether a rail is paid by a prompt and the operator's answer (M-Pesa), not by a transfer someone watches for. */
export const paidByPrompt = (rail: string): boolean => isRailId(rail) && methodOf(rail).receives === 'prompt';

/** Whether a chain watcher scans the rail (every USDT rail). */
export const isScanned = (rail: string): rail is UsdtRail => isRailId(rail) && methodOf(rail).watching !== null;

/** The unit a rail's amounts are shown in (KES, USDT). */
export const amountUnitOf = (rail: string): 'KES' | 'USDT' => (isRailId(rail) ? methodOf(rail).amountUnit : 'USDT');
