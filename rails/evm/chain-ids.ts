import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { railChainId, railRpcUrls, type RailSettings } from '../settings.js';

/**
 * What each EVM RPC answered to `eth_chainId`, checked at start (worker and API). An RPC whose
 * chain id differs from the rail's configured one (`CHAIN_ID_<RAIL>_<ENV>`, defaulting to the
 * public network's) is never used: a node of another network could neither show a real payment
 * nor be trusted not to show a false one. Process-wide, filled by `checkChainIds` at start
 * (rails/evm/chain-id-check.ts).
 */
export interface ChainIdVerdict {
  expected: number;
  /** What the RPC answered; undefined when it could not be asked (then it is retried, and used). */
  actual: number | undefined;
}

const verdicts = new Map<string, ChainIdVerdict>();

/** Records what one RPC answered. */
export function recordChainId(url: string, verdict: ChainIdVerdict): void {
  verdicts.set(url, verdict);
}

/**
 * True when the RPC answered a chain id other than the one expected. `expected` judges against a
 * given rail's chain id instead of the recorded one: one URL may serve two rails (the demo's
 * anvil serves all three EVM rails), and the chain id it answered is the URL's, not the rail's.
 */
export function isOnWrongChain(url: string, expected?: number): boolean {
  const v = verdicts.get(url);
  return v !== undefined && v.actual !== undefined && v.actual !== (expected ?? v.expected);
}

/** The URLs of a rail that may be used: every one not known to be on another chain, in order. */
export function usableRpcUrls(urls: readonly string[], expected?: number): string[] {
  return urls.filter((u) => !isOnWrongChain(u, expected));
}

/**
 * The RPCs of a rail in an environment that may be used, in failover order: every one for the
 * rails without a chain id (TRON, Solana); for the EVM ones, all but those known to be on another
 * chain than the rail's.
 */
export function usableRailRpcUrls(rails: RailSettings, rail: UsdtRail, env: Environment): string[] {
  return usableRpcUrls(railRpcUrls(rails, rail, env), railChainId(rails, rail, env));
}

/** Every verdict so far (for readiness and start-up logs; callers must not show URLs, which may carry keys). */
export function chainIdVerdicts(): ReadonlyMap<string, ChainIdVerdict> {
  return verdicts;
}
