import { railFacts } from '../registry.js';
import type { UsdtRail } from '../../domain/rails.js';

/**
 * Where each chain watcher that ticks in this process last stood, process-wide (like the provider
 * book): the head it read, the last block it has read to, when, and whether its latest tick
 * failed. Readiness judges a watcher's lag and staleness from it (services/system/); the metrics
 * gauges are fed from the same place (activities/chains/index.ts) but readiness never reads
 * prom-client. A process that never ticked a watcher has no entry for it: an API-only process
 * has none. Failures are kept as a kind, never as the error's text, which may name a host.
 */
export type WatcherFailure = 'unreachable' | 'failed';

export interface WatcherPosition {
  rail: UsdtRail;
  environment: string;
  /** The head the last successful tick read; null until one succeeds. */
  headBlock: bigint | null;
  /** The last block read completely (the cursor, or past it what was read ahead of it); null until a tick succeeds. */
  readToBlock: bigint | null;
  /** When a tick last read the chain in this process; null until one does. */
  lastReadMs: number | null;
  /** When this process first ran a tick of the watcher. */
  firstTickMs: number;
  /** Why the latest tick failed; null when it succeeded. */
  failure: WatcherFailure | null;
  /** Since when ticks have failed in a row; null when the latest succeeded. */
  failingSinceMs: number | null;
}

const positions = new Map<string, WatcherPosition>();

function entry(rail: UsdtRail, environment: string, nowMs: number): WatcherPosition {
  const key = `${rail}/${environment}`;
  let p = positions.get(key);
  if (!p) {
    p = { rail, environment, headBlock: null, readToBlock: null, lastReadMs: null, firstTickMs: nowMs, failure: null, failingSinceMs: null };
    positions.set(key, p);
  }
  return p;
}

/** A tick read the chain: its head and the last block it has read to. */
export function recordWatcherRead(rail: UsdtRail, environment: string, headBlock: bigint, readToBlock: bigint, nowMs: number): void {
  Object.assign(entry(rail, environment, nowMs), { headBlock, readToBlock, lastReadMs: nowMs, failure: null, failingSinceMs: null });
}

/** A tick failed: its node could not be reached, or anything else went wrong. */
export function recordWatcherFailure(rail: UsdtRail, environment: string, failure: WatcherFailure, nowMs: number): void {
  const p = entry(rail, environment, nowMs);
  p.failingSinceMs ??= nowMs;
  p.failure = failure;
}

/** Every watcher that ticked in this process, as it last stood. */
export function watcherPositions(): WatcherPosition[] {
  return [...positions.values()].map((p) => ({ ...p }));
}

/** Forgets every watcher (tests that run several stacks in one process). */
export function forgetWatcherPositions(): void {
  positions.clear();
}

/** How far a watcher may fall behind before its process reports not ready (docs/operations.md, "Readiness"). */
export interface WatcherBounds {
  /** Longest time without a successful read of the chain. */
  staleMs: number;
  /** Most blocks (slots on Solana) between the head and the last block read. */
  lagBlocks: number;
}

/** Whatever the chain, a watcher is given at least a minute between reads. */
const minStaleMs = 60_000;
/** The lag bound by default: about ten minutes of the chain's polls, at least 100 blocks. */
const lagWindowMs = 10 * 60_000;
const minLagBlocks = 100;

/**
 * The bounds of a rail's watcher: the operator's settings (READY_CHAIN_STALE_SECONDS,
 * READY_CHAIN_LAG_BLOCKS) when given, else ten poll intervals (at least a minute) and about ten
 * minutes of the rail's polls in blocks. A rail polls about once a block (rails/<family>/facts.ts).
 */
export function watcherBounds(rail: UsdtRail, settings: { pollMs: number | undefined; staleSeconds: number | undefined; lagBlocks: number | undefined }): WatcherBounds {
  const chainPollMs = railFacts[rail].pollMs;
  return {
    staleMs: settings.staleSeconds !== undefined ? settings.staleSeconds * 1000 : Math.max(minStaleMs, 10 * (settings.pollMs ?? chainPollMs)),
    lagBlocks: settings.lagBlocks ?? Math.max(minLagBlocks, Math.ceil(lagWindowMs / chainPollMs)),
  };
}
