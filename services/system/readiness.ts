import type { DatabasePool } from 'slonik';
import { pingDatabase } from '../../db/pool.js';
import { chainIdStatus, chainIdTargets, describeChainIdStatus, type ChainIdStatus } from '../../rails/evm/chain-id-check.js';
import { providerHealth, type ProviderHealth } from '../../rails/chain/providers.js';
import type { ServiceSettings } from '../settings.js';

/**
 * Whether this process should be sent traffic (GET /ready), as a list of named checks: the
 * process is ready when every check is ok. Cheap enough to be probed every few seconds: it reads
 * what the start-up checks recorded (rails/evm/chain-id-check.ts) and asks no chain. A check
 * added later (a watcher's lag, a provider's health) is one more entry with a name of its own.
 */
export interface ReadinessCheck {
  /** What is checked: `database`, `chain-id:<RAIL>:<env>`. */
  name: string;
  ok: boolean;
  /** What was found, for people; never an RPC URL. */
  detail: string;
  /** `chain-id:` checks: what each RPC of the rail answered to eth_chainId. */
  chainId?: ChainIdStatus;
  /** `providers:` checks: each RPC (by position, never its URL or host) as this process's chain watchers last found it. */
  providers?: Omit<ProviderHealth, 'host'>[];
}

export interface Readiness {
  ready: boolean;
  checks: ReadinessCheck[];
}

export async function readiness(deps: { pool: DatabasePool; config: Pick<ServiceSettings, 'rails'> }): Promise<Readiness> {
  const checks = [await databaseCheck(deps.pool), ...chainIdChecks(deps.config), ...providerChecks()];
  return { ready: checks.every((c) => c.ok), checks };
}

async function databaseCheck(pool: DatabasePool): Promise<ReadinessCheck> {
  try {
    await pingDatabase(pool);
    return { name: 'database', ok: true, detail: 'PostgreSQL answers.' };
  } catch {
    return { name: 'database', ok: false, detail: 'PostgreSQL does not answer.' };
  }
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
 * customer account at a provider, so logs carry it and this answer does not), with its state (ok, lagging, erroring, disagreeing), why,
 * and until when it is asked last. Not ok when no provider of the rail is ok: the rail's
 * payments wait (nothing is lost; rails/chain/README.md). An API-only process has none.
 */
function providerChecks(): ReadinessCheck[] {
  return providerHealth().map((rail) => {
    const healthy = rail.providers.filter((p) => p.state === 'ok').length;
    const named = rail.providers.map((p) => `RPC ${p.index} ${p.state}${p.reason ? `: ${p.reason}` : ''}`).join('; ');
    return {
      name: `providers:${rail.rail}:${rail.environment}`,
      ok: healthy > 0,
      detail: `${healthy} of ${rail.providers.length} providers ok. ${named}.`,
      providers: rail.providers.map(({ host: _host, ...rest }) => rest),
    };
  });
}
