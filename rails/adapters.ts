import type { RailId } from '../domain/rails.js';
import { evmAdapter } from './evm/adapter.js';
import { mpesaAdapter } from './mpesa/adapter.js';
import type { Family, RailAdapter } from './payment-method.js';
import { railFacts } from './registry.js';
import { solanaAdapter } from './solana/adapter.js';
import { tronAdapter } from './tron/adapter.js';

/**
 * Each rail family's adapter: its payment method and the reads that touch a chain or an operator
 * (rails/payment-method.ts). For activities and services; pure callers use rails/methods.ts.
 */
export const railAdapters: Readonly<Record<Family, RailAdapter>> = {
  mpesa: mpesaAdapter,
  tron: tronAdapter,
  evm: evmAdapter,
  solana: solanaAdapter,
};

export const adapterOf = (rail: RailId): RailAdapter => railAdapters[railFacts[rail].family];
