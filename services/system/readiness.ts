import type { DatabasePool } from 'slonik';
import { pingDatabase } from '../../db/pool.js';
import { chainIdStatus, chainIdTargets, describeChainIdStatus, type ChainIdStatus } from '../../rails/evm/chain-id-check.js';
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
}

export interface Readiness {
  ready: boolean;
  checks: ReadinessCheck[];
}

export async function readiness(deps: { pool: DatabasePool; config: Pick<ServiceSettings, 'rails'> }): Promise<Readiness> {
  const checks = [await databaseCheck(deps.pool), ...chainIdChecks(deps.config)];
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
