import { followSweeps } from '../../services/treasury/sweep-ledger.js';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Cursor } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { railFacts } from '../../rails/registry.js';
import type { ActivityDeps } from '../deps.js';
import { createDispatchActivities } from '../webhooks/dispatch.js';
import type { TickResult } from '../../rails/evm/scan-tick.js';
import { adapterOf } from '../../rails/adapters.js';
import { RailNotConfiguredError, type ScanContext } from '../../rails/payment-method.js';
import { isUnreachable, OutageLog } from '../../rails/chain/outage.js';
import { signalDeposits } from './signal-deposits.js';
import { WatchSet, type Family } from '../../rails/chain/watch-set.js';
import { recordWatcherFailure, recordWatcherRead } from '../../rails/chain/watcher-positions.js';

/** A tick that could not reach the node: nothing read, nothing changed; the watcher waits `retryAfterMs`. */
export interface UnreachableTick {
  cursor: Cursor | null;
  caughtUp: false;
  unreachable: true;
  retryAfterMs: number;
}

/**
 * A rail the deployment has not configured fails the tick retryably, never for good: a failure
 * Temporal will not retry would end the watcher workflow, and nothing would restart it until a
 * process restarts. Retried, the watcher resumes by itself once workers run with the fix.
 */
const notConfigured = (message: string) => ApplicationFailure.retryable(message, 'ChainNotConfigured');

/**
 * The chain-watcher activities. Each (rail, environment) keeps its in-memory watch set for the
 * life of the worker process; clients are cheap and made per tick.
 */
export function createChainActivities(deps: ActivityDeps) {
  const watchSets = new Map<string, WatchSet>();
  const watchSet = (family: Family, env: Environment) => {
    const key = `${family}:${env}`;
    let set = watchSets.get(key);
    if (!set) watchSets.set(key, (set = new WatchSet(family, env)));
    return set;
  };
  // The scan never waits on merchants' endpoints: its events' first attempts run in delivery workflows.
  const { dispatchEventToWorkflows: dispatchEvent } = createDispatchActivities(deps);
  const outages = new OutageLog(deps.logger);
  const scanContext: ScanContext = { pool: deps.pool, rails: deps.config.rails, logger: deps.logger, watchSet };

  return {
    /** One watcher tick: scan, settle seen deposits, then tell their owners. Safe to repeat. */
    async scanChainTick(input: { rail: UsdtRail; environment: Environment; cursor: Cursor | null }): Promise<(TickResult & { told: number }) | UnreachableTick> {
      const alive = keepAlive();
      try {
        return await scanTick(input);
      } finally {
        alive.stop();
      }
    },
  };

  async function scanTick(input: { rail: UsdtRail; environment: Environment; cursor: Cursor | null }): Promise<(TickResult & { told: number }) | UnreachableTick> {
    const key = `${input.rail}/${input.environment}`;
    let result: TickResult;
    try {
      // The rail's adapter scans it (rails/<family>/adapter.ts); a rail with nothing to scan is a mistake upstream.
      const adapter = adapterOf(input.rail);
      if (!adapter.scanTick) throw ApplicationFailure.nonRetryable(`${input.rail} is not scanned`, 'NotScanned');
      result = await adapter.scanTick(scanContext, input.rail, input.environment, input.cursor, Date.now());
    } catch (err) {
      // An unreachable node is an outage, reported as a result: see outage.ts. Anything else fails the tick.
      // Either way readiness learns of it (rails/chain/watcher-positions.ts), by kind only.
      const unreachable = isUnreachable(err);
      recordWatcherFailure(input.rail, input.environment, unreachable ? 'unreachable' : 'failed', Date.now());
      if (err instanceof RailNotConfiguredError) throw notConfigured(err.message);
      if (!unreachable) throw err;
      return { cursor: input.cursor, caughtUp: false, unreachable: true, retryAfterMs: outages.failed(key, err, Date.now()) };
    }
    outages.succeeded(key, Date.now());
    const [headBlock, readToBlock] = [blockOf(result.head), readTo(result.cursor)];
    if (headBlock !== undefined && readToBlock !== undefined) recordWatcherRead(input.rail, input.environment, headBlock, readToBlock, Date.now());
    if (result.disputePassed !== undefined) {
      deps.logger?.warn(
        { watcher: key, blockNumber: result.disputePassed },
        'a transfer one provider reports and no other vouches for was held for the whole dispute window (disputeHoldBlocks); the cursor passed it and the reconciler judges it from balances',
      );
    }
    for (const r of result.recovered ?? []) {
      deps.logger?.info({ watcher: key, ...r }, r.by === 'rescan' ? 'deposit found by the rescan of unfinalized blocks' : 'deposit found by a second provider');
    }
    // Heights in blocks (slots on Solana); a counter must never fail a tick.
    if (/^\d+$/.test(result.head) && /^\d+$/.test(result.cursor.number)) {
      deps.metrics?.watcherPosition(input.rail, input.environment, BigInt(result.head), BigInt(result.cursor.number), railFacts[input.rail].blockSeconds);
    }
    const told = await signalDeposits({ pool: deps.pool, temporal: deps.temporal, dispatchEvent, metrics: deps.metrics }, input.rail, input.environment, BigInt(result.head));
    // Broadcast sweeps of the rail followed to its confirmation depth (docs/treasury.md); never fails a tick.
    await followSweeps({ pool: deps.pool, rails: deps.config.rails, dispatchEvent: (eventId) => dispatchEvent({ eventId }) }, input.rail, input.environment).catch((err: unknown) => {
      deps.logger?.warn({ watcher: key, err: (err as Error).message }, 'following broadcast sweeps failed; the next tick tries again');
    });
    return { ...result, told };
  }
}

/** A height as a number of blocks; undefined for anything else (recording a position must never fail a tick). */
const blockOf = (height: string | null | undefined) => (height != null && /^\d+$/.test(height) ? BigInt(height) : undefined);

/** The last block a tick has read: the cursor (which stands on a final block), or what was read past it. */
function readTo(cursor: Cursor): bigint | undefined {
  const at = blockOf(cursor.number);
  const scanned = blockOf(cursor.scannedTo);
  return at !== undefined && scanned !== undefined && scanned > at ? scanned : at;
}

/** How often a running tick tells Temporal its worker is alive (the watcher's heartbeat timeout is 20 s). */
const tickHeartbeatMs = 5_000;

/**
 * Heartbeats while a tick runs. A tick may take up to its two-minute timeout (slow nodes, retried
 * reads), so without a heartbeat a worker killed mid-tick left the watcher waiting out those two
 * minutes before the tick ran again: every deposit on the rail unseen meanwhile
 * (test/chaos/embedded-faults.test.ts). Outside an activity (a direct call in a test) it does nothing.
 */
function keepAlive(): { stop(): void } {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return { stop() {} };
  }
  const timer = setInterval(() => context.heartbeat(), tickHeartbeatMs);
  return { stop: () => clearInterval(timer) };
}

export type ChainActivities = ReturnType<typeof createChainActivities>;
