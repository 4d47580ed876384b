import type { RailId } from '../domain/rails.js';
import { evmMethod } from './evm/method.js';
import { mpesaMethod } from './mpesa/method.js';
import type { Family, PaymentMethod } from './payment-method.js';
import { railFacts } from './registry.js';
import { solanaMethod } from './solana/method.js';
import { tronMethod } from './tron/method.js';

/**
 * Each rail family's payment method (the pure rules, rails/payment-method.ts). A rail finds its
 * method through its facts' family. Not for workflows: methods use Node's crypto (Solana Pay
 * references, xpub derivation); workflows read rails/registry.ts only.
 */
export const paymentMethods: Readonly<Record<Family, PaymentMethod>> = {
  mpesa: mpesaMethod,
  tron: tronMethod,
  evm: evmMethod,
  solana: solanaMethod,
};

export const methodOf = (rail: RailId): PaymentMethod => paymentMethods[railFacts[rail].family];
