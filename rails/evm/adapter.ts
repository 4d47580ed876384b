import { reconcileChain } from '../chain/reconcile-view.js';
import type { RailAdapter } from '../payment-method.js';
import { readErc20Balance } from './client.js';
import { evmTreasuryRead, parseEvmDestination } from './holdings.js';
import { evmMethod } from './method.js';
import { broadcastSponsoredSweep } from './sponsored-broadcast.js';
import { planSponsoredSweep, type EvmSponsoredPlan } from './sponsored-plan.js';
import { broadcastEvmSweep, evmSweepFinalizedHeight } from './sweep-broadcast.js';
import { evmSweepTxChecks } from './sweep-follow.js';
import { planEvmSweep, type EvmSweepPlan } from './sweep-plan.js';
import { scanEvmTick } from './scan-tick.js';
import { evmChainView, evmDialect } from './watch-view.js';

/** The EVM family's adapter: its rules (method.ts), the `Transfer` log scanner, balance, treasury and reconciliation reads. */
export const evmAdapter: RailAdapter = {
  ...evmMethod,
  scanTick: (ctx, rail, environment, cursor, nowMs) =>
    scanEvmTick(ctx.pool, evmChainView(ctx, rail, environment, evmDialect), ctx.watchSet('evm', environment), cursor, nowMs),
  // The API answers a person waiting: short timeouts, one retry; watchers choose their own.
  readBalance: (url, contract, address) => readErc20Balance(url, contract as `0x${string}`, address as `0x${string}`, { timeoutMs: 8_000, retryCount: 1 }),
  reconcileView: reconcileChain,
  sweepPlan: planEvmSweep,
  sweepFinalizedHeight: evmSweepFinalizedHeight,
  sweepTxChecks: evmSweepTxChecks,
  sponsoredSweepPlan: planSponsoredSweep,
  broadcastSweep: (rails, rail, environment, plan, signed, claim, ledger) =>
    (plan as EvmSponsoredPlan).kind === 'sponsored'
      ? broadcastSponsoredSweep(rails, rail, environment, plan as EvmSponsoredPlan, signed, claim, ledger)
      : broadcastEvmSweep(rails, rail, environment, plan as EvmSweepPlan, signed, claim, ledger),
  treasury: { kind: 'holdings', nativeDecimals: 18, read: evmTreasuryRead, parseDestination: parseEvmDestination },
};
