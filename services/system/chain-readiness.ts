import type { DatabasePool } from 'slonik';
import { cursorAges } from '../../db/chain-repo.js';
import { chainIdStatus, chainIdTargets, describeChainIdStatus } from '../../rails/evm/chain-id-check.js';
import { providerHealth } from '../../rails/chain/providers.js';
import { watcherBounds, watcherPositions, type WatcherBounds, type WatcherPosition } from '../../rails/chain/watcher-positions.js';
import type { ServiceSettings } from '../settings.js';
import { withinDeadline } from './deadline.js';
import type { ReadinessCheck, WatcherStatus } from './readiness-check.js';

type Deps = { pool: DatabasePool; config: Pick<ServiceSettings, 'rails' | 'chainPollMs' | 'readyChain'> };

/** The checks of the chains: chain ids in every process; providers and watchers where watchers run. */
export async function chainChecks(deps: Deps): Promise<ReadinessCheck[]> {
  return [...chainIdChecks(deps.config), ...providerChecks(), ...(await watcherChecks(deps))];
}

/**
 * One check per EVM rail and environment in use. It fails only when no RPC of the rail is
 * usable; one RPC on another chain among usable ones is named in the detail, and the rail works.
 */
function chainIdChecks(config: Pick<ServiceSettings, 'rails'>): ReadinessCheck[] {
  return chainIdTargets(config.rails).map((target) => {
    const status = chainIdStatus(target);
    return { name: `chain-id:${target.rail}:${target.environment}`, ok: status.usable > 0, detail: describeChainIdStatus(status), chainId: status };
  });
}

/**
 * One check per rail whose chain watcher runs in this process (`malipo start`, or a worker):
 * each provider by its position in RPC_URL_<RAIL>_<ENV> (the route is public: a host can name a
 * customer account at a provider, so logs carry it and this answer does not), with its state (ok,
 * lagging, erroring, disagreeing), why, and until when it is asked last. Not ok when no provider
 * of the rail is ok: the rail's payments wait (nothing is lost; rails/chain/README.md). An
 * API-only process has none.
 */
function providerChecks(): ReadinessCheck[] {
  return providerHealth().map((rail) => {
    const providers = rail.providers.map(({ host: _host, ...rest }) => ({ ...rest, reason: rest.reason && withoutAddresses(rest.reason) }));
    const healthy = providers.filter((p) => p.state === 'ok').length;
    const named = providers.map((p) => `RPC ${p.index} ${p.state}${p.reason ? `: ${p.reason}` : ''}`).join('; ');
    return {
      name: `providers:${rail.rail}:${rail.environment}`,
      ok: healthy > 0,
      detail: `${healthy} of ${providers.length} providers ok. ${named}.`,
      providers,
    };
  });
}

/**
 * A provider's failure without an address in it. The book strips URLs (describeFailure), but a
 * socket error's own text names the address it could not reach (`connect ECONNREFUSED
 * 10.0.0.5:8545`), and a host can name a customer's account at a provider.
 */
export function withoutAddresses(text: string): string {
  return text
    .replace(/\[[0-9a-f:.]+\](:\d+)?/gi, '<address>')
    .replace(/\b(\d{1,3}\.){3}\d{1,3}(:\d+)?\b/g, '<address>')
    .replace(/\b([a-z0-9-]+\.)+[a-z]{2,}(:\d+)?\b/gi, '<address>');
}

/**
 * One check per watcher that ticked in this process. A provider book only learns of providers
 * that answered something, so a rail whose every provider is gone shows as a watcher that stopped
 * reading. Stale: no read of the chain within the bound, by this process or any other (workers
 * share the chains queue, and each successful tick saves the cursor with the time, so a tick that
 * went to another worker keeps this one ready). Lagging: this process's own latest read, while
 * fresh, trails the head by more than the bound.
 */
async function watcherChecks(deps: Deps): Promise<ReadinessCheck[]> {
  const positions = watcherPositions();
  if (positions.length === 0) return [];
  // The database check names a database that does not answer; here the process's own record suffices.
  const ages = await withinDeadline(() => cursorAges(deps.pool));
  const nowMs = Date.now();
  return positions.map((p) => {
    const savedAgeMs = ages.ok ? ages.value.find((a) => a.rail === p.rail && a.environment === p.environment)?.ageMs : undefined;
    const bounds = watcherBounds(p.rail, { pollMs: deps.config.chainPollMs, staleSeconds: deps.config.readyChain.staleSeconds, lagBlocks: deps.config.readyChain.lagBlocks });
    return watcherCheck(p, savedAgeMs, bounds, nowMs);
  });
}

/** One watcher's verdict at `nowMs`, from its record here and the age of its saved cursor (pure: test/unit/readiness-watcher.test.ts). */
export function watcherCheck(p: WatcherPosition, savedAgeMs: number | undefined, bounds: WatcherBounds, nowMs: number): ReadinessCheck {
  const ownAgeMs = p.lastReadMs !== null ? nowMs - p.lastReadMs : undefined;
  // The freshest read, here or saved by another worker (never below 0 should the clocks differ).
  const ages = [ownAgeMs, savedAgeMs].filter((a): a is number => a !== undefined);
  const readAgeMs = ages.length > 0 ? Math.max(0, Math.min(...ages)) : undefined;
  // Before any read, the time since this process first tried counts against the bound.
  const staleForMs = readAgeMs ?? nowMs - p.firstTickMs;
  const lag = p.headBlock !== null && p.readToBlock !== null ? (p.headBlock > p.readToBlock ? p.headBlock - p.readToBlock : 0n) : null;
  const status: WatcherStatus = {
    headBlock: p.headBlock !== null ? Number(p.headBlock) : null,
    readToBlock: p.readToBlock !== null ? Number(p.readToBlock) : null,
    lagBlocks: lag !== null ? Number(lag) : null,
    lastReadSecondsAgo: readAgeMs !== undefined ? Math.round(readAgeMs / 1000) : null,
    failing: p.failure,
    bounds: { staleSeconds: Math.round(bounds.staleMs / 1000), lagBlocks: bounds.lagBlocks },
  };
  const problems: string[] = [];
  if (staleForMs > bounds.staleMs) {
    const why = p.failure === 'unreachable' ? '; its node cannot be reached' : p.failure === 'failed' ? '; its ticks fail' : '';
    const since = p.failingSinceMs !== null ? ` since ${new Date(p.failingSinceMs).toISOString()}` : '';
    const stale = readAgeMs === undefined ? `It has not read its chain in the ${Math.round(staleForMs / 1000)} s since its first tick here` : `It last read its chain ${Math.round(staleForMs / 1000)} s ago`;
    problems.push(`${stale} (bound ${status.bounds.staleSeconds} s)${why}${since}.`);
  }
  const ownFresh = ownAgeMs !== undefined && ownAgeMs <= bounds.staleMs;
  if (ownFresh && lag !== null && lag > BigInt(bounds.lagBlocks)) {
    problems.push(`It trails the head by ${lag} blocks (bound ${bounds.lagBlocks}): read to ${p.readToBlock} of ${p.headBlock}.`);
  }
  const where = lag !== null ? `Read to block ${p.readToBlock} of ${p.headBlock} (${lag} behind, bound ${bounds.lagBlocks})` : 'No block read yet';
  const when = readAgeMs !== undefined ? `, ${Math.round(readAgeMs / 1000)} s ago (bound ${status.bounds.staleSeconds} s)` : '';
  return {
    name: `watcher:${p.rail}:${p.environment}`,
    ok: problems.length === 0,
    detail: problems.length === 0 ? `${where}${when}.` : problems.join(' '),
    watcher: status,
  };
}
