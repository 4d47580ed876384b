import { ApplicationFailure, Context } from '@temporalio/activity';
import { getAddress } from 'viem';
import type { Cursor } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import { tronAddressFromBytes, tronAddressToEvmHex } from '../../domain/hd/address.js';
import type { UsdtRail } from '../../domain/rails.js';
import { railFacts } from '../../rails/registry.js';
import { railEndpoint } from '../../rails/settings.js';
import { usableRailRpcUrls } from '../../rails/evm/chain-ids.js';
import { providerBook } from '../../rails/chain/providers.js';
import { readSolidifiedBlock } from '../../rails/tron/client.js';
import type { ActivityDeps } from '../index.js';
import { createDispatchActivities } from '../webhooks/dispatch.js';
import { evmClient } from '../../rails/evm/client.js';
import { scanEvmTick, type EvmChainView, type TickResult } from '../../rails/evm/scan-tick.js';
import { isUnreachable, OutageLog } from '../../rails/chain/outage.js';
import { signalDeposits } from './signal-deposits.js';
import { scanSolanaTick } from '../../rails/solana/scan-tick.js';
import { solanaView } from '../../rails/solana/view.js';
import { WatchSet, type Family } from '../../rails/chain/watch-set.js';
import { recordWatcherFailure, recordWatcherRead } from '../../rails/chain/watcher-positions.js';

export type EvmStyleRail = Exclude<UsdtRail, 'USDT_SOL'>;

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

  /**
   * The rail's RPCs in failover order (those known to answer another chain id left out), each
   * with its health in the process-wide provider book (rails/chain/providers.ts).
   */
  function view(rail: EvmStyleRail, environment: Environment): EvmChainView {
    const ep = railEndpoint(deps.config.rails, rail, environment);
    if (!ep.usdtContract) {
      throw notConfigured(`No USDT contract is known for ${rail} in ${environment}; set USDT_CONTRACT_${rail}_${environment.toUpperCase()}.`);
    }
    const urls = usableRailRpcUrls(deps.config.rails, rail, environment);
    if (urls.length === 0) throw notConfigured(`Every RPC of ${rail} in ${environment} answers another chain id (see the start-up log); set RPC_URL_${rail}_${environment.toUpperCase()}.`);
    const tron = railFacts[rail].family === 'tron';
    return {
      rail,
      environment,
      rpcs: urls.map((url) => ({
        client: evmClient(tron ? `${url.replace(/\/$/, '')}/jsonrpc` : url, { timeoutMs: 20_000, retryCount: 0 }),
        solidifiedHead: tron ? async () => (await readSolidifiedBlock(url, { timeoutMs: 20_000 })).number : undefined,
      })),
      book: providerBook(rail, environment, urls, deps.logger),
      token: tron ? tronAddressToEvmHex(ep.usdtContract) : (ep.usdtContract as `0x${string}`),
      toWatchAddress: tron ? (hex) => tronAddressFromBytes(Buffer.from(hex.slice(2), 'hex')) : (hex) => getAddress(hex),
      confirmations: deps.config.rails[rail].confirmations,
    };
  }

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
      // The rail's adapter family picks the scanner: EVM-style logs (the EVM chains, and TRON
      // through its JSON-RPC) or Solana's reference scan.
      const family = railFacts[input.rail].family;
      result =
        family === 'solana'
          ? await scanSolanaTick(deps.pool, solanaView(deps.config.rails, input.environment, deps.logger), watchSet('sol_ref', input.environment), input.cursor, Date.now())
          : await scanEvmTick(deps.pool, view(input.rail as EvmStyleRail, input.environment), watchSet(family === 'tron' ? 'tron' : 'evm', input.environment), input.cursor, Date.now());
    } catch (err) {
      // An unreachable node is an outage, reported as a result: see outage.ts. Anything else fails the tick.
      // Either way readiness learns of it (rails/chain/watcher-positions.ts), by kind only.
      const unreachable = isUnreachable(err);
      recordWatcherFailure(input.rail, input.environment, unreachable ? 'unreachable' : 'failed', Date.now());
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
