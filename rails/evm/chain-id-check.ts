import type { Logger } from 'pino';
import { environments, type Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { methodOf } from '../methods.js';
import { usdtRails } from '../registry.js';
import { railChainId, railEndpoint, railRpcUrls, type RailSettings } from '../settings.js';
import { chainIdVerdicts, recordChainId, type ChainIdVerdict } from './chain-ids.js';
import { evmClient } from './client.js';

/**
 * The start-up check of rails/evm/chain-ids.ts: every process that reads chains (API and worker)
 * asks each configured EVM RPC for its `eth_chainId` once, in the background, and records the
 * answer. Start never waits for it: an offline machine cannot reach the public defaults, and a
 * node that does not answer yet is used (as it was before this check) and asked again later,
 * with a backoff, until it answers. An RPC is named by its position in its rail's list ("RPC 2
 * of 3"), never by its URL, which may carry a provider key.
 */

/** One EVM rail in one environment: the chain id its RPCs must answer, and the RPCs. */
export interface ChainIdTarget {
  rail: UsdtRail;
  environment: Environment;
  expected: number;
  urls: readonly string[];
}

/** What one RPC of a target is known to be. */
export type RpcChainVerdict = 'verified' | 'wrong_chain' | 'unanswered';

/** What readiness says of one target, from the record alone (no chain request). */
export interface ChainIdStatus {
  rail: UsdtRail;
  environment: Environment;
  expected: number;
  /** One per configured RPC, in failover order, named by its 1-based position. */
  rpcs: Array<{ rpc: number; actual: number | null; verdict: RpcChainVerdict }>;
  /** How many RPCs may be used: all but those on another chain. */
  usable: number;
}

/**
 * The EVM rails and environments whose RPCs are asked: those with a token contract. A rail
 * without one (Polygon's testnet by default) is simulated only and its RPC never read.
 */
export function chainIdTargets(rails: RailSettings): ChainIdTarget[] {
  return usdtRails
    .filter((rail) => methodOf(rail).takesChainId)
    .flatMap((rail) => environments.map((environment) => ({ rail, environment, expected: railChainId(rails, rail, environment) })))
    .filter((t): t is Omit<ChainIdTarget, 'urls'> => t.expected !== undefined && !!railEndpoint(rails, t.rail, t.environment).usdtContract)
    .map((t) => ({ ...t, urls: railRpcUrls(rails, t.rail, t.environment) }));
}

/** Judges a target's RPCs by what they answered; pure over `record`. */
export function chainIdStatus(target: ChainIdTarget, record: ReadonlyMap<string, ChainIdVerdict> = chainIdVerdicts()): ChainIdStatus {
  const rpcs = target.urls.map((url, i) => {
    const actual = record.get(url)?.actual;
    const verdict: RpcChainVerdict = actual === undefined ? 'unanswered' : actual === target.expected ? 'verified' : 'wrong_chain';
    return { rpc: i + 1, actual: actual ?? null, verdict };
  });
  const { rail, environment, expected } = target;
  return { rail, environment, expected, rpcs, usable: rpcs.filter((r) => r.verdict !== 'wrong_chain').length };
}

/** One sentence for people (logs, readiness): what each RPC answered; no URL. */
export function describeChainIdStatus(s: ChainIdStatus): string {
  const n = s.rpcs.length;
  const each = s.rpcs.map((r) =>
    r.verdict === 'verified' ? `RPC ${r.rpc} of ${n} is on it`
      : r.verdict === 'wrong_chain' ? `RPC ${r.rpc} of ${n} is on chain ${r.actual} and is not used`
        : `RPC ${r.rpc} of ${n} has not answered yet (used meanwhile, asked again)`);
  return `${chainIdSetting(s.rail, s.environment)} is ${s.expected}: ${each.join('; ')}; ${s.usable} of ${n} usable.`;
}

/** The setting that names a target's chain id, for messages an operator acts on. */
export function chainIdSetting(rail: UsdtRail, environment: Environment): string {
  return `CHAIN_ID_${rail}_${environment.toUpperCase()}`;
}

export interface ChainIdCheckOptions {
  /** How long one `eth_chainId` may take: short, so an unreachable public node costs little. */
  timeoutMs?: number;
  /** First wait before RPCs that did not answer are asked again; doubles up to `retryMaxMs`. */
  retryFirstMs?: number;
  retryMaxMs?: number;
}

export interface ChainIdCheck {
  /** Settles once every RPC was asked once (answered or not); start never waits for it. */
  firstRound: Promise<void>;
  /** Ends the retries (shutdown). */
  stop(): void;
}

/**
 * Asks every target's RPCs for their chain id, records the answers, says at once which RPC is on
 * another chain (logged once, with the rail, environment, expected and actual ids), and asks the
 * unanswered ones again until they answer or `stop()`.
 */
export function checkChainIds(rails: RailSettings, logger: Pick<Logger, 'info' | 'warn' | 'error'>, opts: ChainIdCheckOptions = {}): ChainIdCheck {
  const { timeoutMs = 3_000, retryFirstMs = 30_000, retryMaxMs = 10 * 60_000 } = opts;
  const targets = chainIdTargets(rails);
  // Asked once per round even when several rails share it (the demo's anvil serves all three).
  const expectedOf = new Map<string, number>();
  for (const t of targets) for (const url of t.urls) if (!expectedOf.has(url)) expectedOf.set(url, t.expected);
  for (const [url, expected] of expectedOf) recordChainId(url, { expected, actual: chainIdVerdicts().get(url)?.actual });

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async (urls: string[], first: boolean, waitMs: number): Promise<void> => {
    const answers = await Promise.all(urls.map(async (url) => [url, await askChainId(url, timeoutMs)] as const));
    if (stopped) return;
    const answered = new Set<string>();
    for (const [url, actual] of answers) {
      if (actual === undefined) continue;
      answered.add(url);
      recordChainId(url, { expected: expectedOf.get(url)!, actual });
    }
    for (const t of targets) report(logger, chainIdStatus(t), t.urls.map((u) => answered.has(u)), first);
    const left = urls.filter((u) => !answered.has(u));
    if (left.length === 0 || stopped) return;
    timer = setTimeout(() => void round(left, false, Math.min(waitMs * 2, retryMaxMs)), waitMs);
    timer.unref();
  };
  const firstRound = round([...expectedOf.keys()], true, retryFirstMs);
  return {
    firstRound,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The chain id an RPC reports, or undefined when it could not be asked (unreachable, slow, an error). */
export async function askChainId(url: string, timeoutMs: number): Promise<number | undefined> {
  try {
    return await evmClient(url, { timeoutMs, retryCount: 0 }).getChainId();
  } catch {
    return undefined;
  }
}

/** Logs what a round learned of one target: RPCs on another chain once, when they answer. */
function report(logger: Pick<Logger, 'info' | 'warn' | 'error'>, s: ChainIdStatus, answeredNow: boolean[], first: boolean): void {
  const where = { rail: s.rail, environment: s.environment, expectedChainId: s.expected, setting: chainIdSetting(s.rail, s.environment) };
  const n = s.rpcs.length;
  for (const r of s.rpcs) {
    if (!answeredNow[r.rpc - 1]) continue;
    if (r.verdict === 'wrong_chain') {
      logger.error({ ...where, rpc: `RPC ${r.rpc} of ${n}`, actualChainId: r.actual, usableRpcs: s.usable },
        s.usable === 0
          ? 'EVM RPC is on another chain than configured: it is not used, and the rail has no usable RPC left (GET /ready answers 503)'
          : 'EVM RPC is on another chain than configured: it is not used');
    } else if (r.verdict === 'verified' && !first) {
      logger.info({ ...where, rpc: `RPC ${r.rpc} of ${n}` }, 'EVM RPC answered at last: it is on the configured chain');
    }
  }
  const verified = s.rpcs.filter((r) => r.verdict === 'verified' && answeredNow[r.rpc - 1]).length;
  if (first && verified > 0) logger.info({ ...where, verifiedRpcs: verified, rpcs: n }, 'EVM RPCs checked: on the configured chain');
  const silent = s.rpcs.filter((r) => r.verdict === 'unanswered').map((r) => `RPC ${r.rpc} of ${n}`);
  if (first && silent.length > 0) {
    logger.info({ ...where, rpcs: silent }, 'could not ask EVM RPCs for their chain id at start: they are used meanwhile and asked again');
  }
}
