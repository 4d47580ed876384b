import { ApplicationFailure } from '@temporalio/activity';
import { getAddress } from 'viem';
import type { Cursor } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import { tronAddressFromBytes, tronAddressToEvmHex } from '../../domain/hd/address.js';
import type { UsdtRail } from '../../domain/rails.js';
import { railEndpoint } from '../../runtime/rail-endpoints.js';
import type { ActivityDeps } from '../index.js';
import { createDispatchActivities } from '../webhooks/dispatch.js';
import { evmClient } from './evm/client.js';
import { scanEvmTick, type EvmChainView, type TickResult } from './evm/scan-tick.js';
import { isUnreachable, OutageLog } from './outage.js';
import { signalDeposits } from './signal-deposits.js';
import { scanSolanaTick } from './solana/scan-tick.js';
import { solanaView } from './solana/view.js';
import { WatchSet, type Family } from './watch-set.js';

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

function confirmationsOverride(overrides: Readonly<Record<string, string>>, rail: UsdtRail): number | undefined {
  const raw = overrides[`CONFIRMATIONS_${rail}`];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw notConfigured(`CONFIRMATIONS_${rail} must be a positive integer`);
  return n;
}

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
  const { dispatchEvent } = createDispatchActivities(deps);
  const outages = new OutageLog(deps.logger);

  function view(rail: EvmStyleRail, environment: Environment): EvmChainView {
    const ep = railEndpoint(deps.config, rail, environment);
    if (!ep.usdtContract) {
      throw notConfigured(`No USDT contract is known for ${rail} in ${environment}; set USDT_CONTRACT_${rail}_${environment.toUpperCase()}.`);
    }
    const tron = rail === 'USDT_TRON';
    return {
      rail,
      environment,
      client: evmClient(tron ? `${ep.rpcUrl.replace(/\/$/, '')}/jsonrpc` : ep.rpcUrl, { timeoutMs: 20_000, retryCount: 0 }),
      token: tron ? tronAddressToEvmHex(ep.usdtContract) : (ep.usdtContract as `0x${string}`),
      toWatchAddress: tron ? (hex) => tronAddressFromBytes(Buffer.from(hex.slice(2), 'hex')) : (hex) => getAddress(hex),
      confirmations: confirmationsOverride(deps.config.railOverrides, rail),
    };
  }

  return {
    /** One watcher tick: scan, settle seen deposits, then tell their owners. Safe to repeat. */
    async scanChainTick(input: { rail: UsdtRail; environment: Environment; cursor: Cursor | null }): Promise<(TickResult & { told: number }) | UnreachableTick> {
      const key = `${input.rail}/${input.environment}`;
      let result: TickResult;
      try {
        result =
          input.rail === 'USDT_SOL'
            ? await scanSolanaTick(deps.pool, solanaView(deps.config, input.environment), watchSet('sol_ref', input.environment), input.cursor, Date.now())
            : await scanEvmTick(deps.pool, view(input.rail, input.environment), watchSet(input.rail === 'USDT_TRON' ? 'tron' : 'evm', input.environment), input.cursor, Date.now());
      } catch (err) {
        // An unreachable node is an outage, reported as a result: see outage.ts. Anything else fails the tick.
        if (!isUnreachable(err)) throw err;
        return { cursor: input.cursor, caughtUp: false, unreachable: true, retryAfterMs: outages.failed(key, err, Date.now()) };
      }
      outages.succeeded(key, Date.now());
      const told = await signalDeposits({ pool: deps.pool, temporal: deps.temporal, dispatchEvent }, input.rail, input.environment, BigInt(result.head));
      return { ...result, told };
    },
  };
}

export type ChainActivities = ReturnType<typeof createChainActivities>;
