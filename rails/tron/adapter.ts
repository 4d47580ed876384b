import { tronAddressFromBytes, tronAddressToEvmHex } from './address.js';
import { reconcileChain } from '../chain/reconcile-view.js';
import { scanEvmTick } from '../evm/scan-tick.js';
import { evmChainView, type EvmDialect } from '../evm/watch-view.js';
import type { RailAdapter } from '../payment-method.js';
import { readSolidifiedBlock, readTrc20Balance } from './client.js';
import { parseTronDestination, tronTreasuryRead } from './holdings.js';
import { tronMethod } from './method.js';
import { broadcastTronSweep, tronSweepFinalizedHeight, tronSweepTxChecks } from './sweep-broadcast.js';
import { planTronSweep, type TronSweepPlan } from './sweep-plan.js';

/**
 * TRON is scanned by the EVM scanner through TronGrid's `/jsonrpc` (same `Transfer` logs), with
 * its contract and addresses in base58 and the solidified block as its finality.
 */
const tronDialect: EvmDialect = {
  rpcUrl: (url) => `${url.replace(/\/$/, '')}/jsonrpc`,
  solidifiedHead: async (url) => (await readSolidifiedBlock(url, { timeoutMs: 20_000 })).number,
  tokenHex: (contract) => tronAddressToEvmHex(contract),
  watchAddress: (hex) => tronAddressFromBytes(Buffer.from(hex.slice(2), 'hex')),
};

/** TRON's adapter: its rules (method.ts), the EVM scanner in TRON's dialect, TRC-20 balance, treasury and reconciliation reads. */
export const tronAdapter: RailAdapter = {
  ...tronMethod,
  scanTick: (ctx, rail, environment, cursor, nowMs) =>
    scanEvmTick(ctx.pool, evmChainView(ctx, rail, environment, tronDialect), ctx.watchSet('tron', environment), cursor, nowMs),
  readBalance: (url, contract, address) => readTrc20Balance(url, contract, address, { timeoutMs: 8_000 }),
  reconcileView: reconcileChain,
  // Plans (rails/tron/sweep-plan.ts), signed by the offline signer, broadcast and followed to the solidified block (sweep-broadcast.ts).
  sweepPlan: planTronSweep,
  broadcastSweep: (rails, rail, environment, plan, signed, claim, ledger) => broadcastTronSweep(rails, rail, environment, plan as TronSweepPlan, signed, claim, ledger),
  sweepFinalizedHeight: tronSweepFinalizedHeight,
  sweepTxChecks: tronSweepTxChecks,
  // TRX has 6 decimals (sun). Balances come through Multicall3's aggregate3 (rails/tron/holdings.ts).
  treasury: { kind: 'holdings', nativeDecimals: 6, read: tronTreasuryRead, parseDestination: parseTronDestination },
};
