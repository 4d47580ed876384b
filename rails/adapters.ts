import type { RailId } from '../domain/rails.js';
import { evmAdapter } from './evm/adapter.js';
import { mpesaAdapter } from './mpesa/adapter.js';
import type { Family, RailAdapter } from './payment-method.js';
import { railFacts } from './registry.js';
import { solanaAdapter } from './solana/adapter.js';
import { tronAdapter } from './tron/adapter.js';

/**
 * Each rail family's adapter: its payment method and the reads that touch a chain or an operator
 * (rails/payment-method.ts). For activities and services; pure callers use rails/methods.ts. A
 * family registered at boot (rails/register.ts) is added here.
 */
export const railAdapters: Readonly<Record<Family, RailAdapter>> = {
  mpesa: mpesaAdapter,
  tron: tronAdapter,
  evm: evmAdapter,
  solana: solanaAdapter,
};

/** Adds a family's adapter (rails/register.ts); a family keeps the one it was first given. */
export function addRailAdapter(adapter: RailAdapter): void {
  const known = railAdapters[adapter.family];
  if (known && known !== adapter) throw new Error(`the family ${adapter.family} has another adapter already`);
  (railAdapters as Record<Family, RailAdapter>)[adapter.family] = adapter;
}

export const adapterOf = (rail: RailId): RailAdapter => railAdapters[railFacts[rail].family]!;
