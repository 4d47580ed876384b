import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { shippedMigrations } from '../../db/migrate.js';
import { appliedMigrations, pingDatabase } from '../../db/pool.js';
import type { ServiceSettings } from '../settings.js';
import { chainChecks } from './chain-readiness.js';
import type { ReadinessCheck } from './readiness-check.js';
import { withinDeadline, checkTimeoutMs } from './deadline.js';

export type { ReadinessCheck };

/**
 * Whether this process should be sent traffic (GET /ready), as a list of named checks: the
 * process is ready when every check is ok. Cheap enough to be probed every second: PostgreSQL
 * gets two small queries (three where chain watchers run), Temporal one GetSystemInfo, Redis
 * one PING, and the chain checks read what the start-up checks and the watchers recorded, asking
 * no chain. Every check runs at once under its own deadline (checkTimeoutMs), so a dependency
 * that hangs makes its check fail and the answer still comes within about that time.
 *
 * The route is public: no detail carries a URL, a host, a password or a driver's error text (it
 * can name the host it failed to reach), only what was found in our words; a chain provider's
 * reason is shown with its addresses removed (chain-readiness.ts).
 */
export interface Readiness {
  ready: boolean;
  checks: ReadinessCheck[];
}

/** The one thing readiness asks of Redis (the rate-limit store's client, api/plugins/rate-limit.ts). */
export interface RedisPing {
  /** ioredis' connection state: `ready` once connected and usable. */
  readonly status: string;
  ping(): Promise<unknown>;
}

export interface ReadinessDeps {
  pool: DatabasePool;
  temporal: Pick<Client, 'connection'>;
  /** The shared rate-limit Redis when REDIS_URL is set; without it there is no `redis` check. */
  redis?: RedisPing;
  config: Pick<ServiceSettings, 'rails' | 'chainPollMs' | 'readyChain'>;
}

export async function readiness(deps: ReadinessDeps): Promise<Readiness> {
  const checks = (
    await Promise.all([
      databaseCheck(deps.pool),
      migrationsCheck(deps.pool),
      temporalCheck(deps.temporal),
      deps.redis ? redisCheck(deps.redis) : [],
      chainChecks(deps),
    ])
  ).flat();
  return { ready: checks.every((c) => c.ok), checks };
}

const seconds = `${checkTimeoutMs / 1000} s`;

async function databaseCheck(pool: DatabasePool): Promise<ReadinessCheck> {
  const answer = await withinDeadline(() => pingDatabase(pool));
  if (answer.ok) return { name: 'database', ok: true, detail: 'PostgreSQL answers.' };
  return { name: 'database', ok: false, detail: answer.timedOut ? `PostgreSQL did not answer within ${seconds}.` : 'PostgreSQL does not answer.' };
}

/**
 * Every migration this code ships is applied. One the database lacks means the code expects a
 * table or column that is not there: not ready, naming the first missing. One the database has
 * and the code does not know is an older process during a rolling deploy (migrations only add):
 * ready, and the detail says so.
 */
async function migrationsCheck(pool: DatabasePool): Promise<ReadinessCheck> {
  const answer = await withinDeadline(() => Promise.all([shippedMigrations(), appliedMigrations(pool)]));
  if (!answer.ok) {
    return { name: 'migrations', ok: false, detail: answer.timedOut ? `The applied migrations could not be read within ${seconds}.` : 'The applied migrations could not be read.' };
  }
  const [shipped, applied] = answer.value;
  const done = new Set(applied);
  const known = new Set(shipped);
  const missing = shipped.filter((m) => !done.has(m));
  const unknown = applied.filter((m) => !known.has(m)).sort();
  if (missing.length > 0) {
    return {
      name: 'migrations',
      ok: false,
      detail: `Migration ${missing[0]} is not applied (${missing.length} of ${shipped.length} missing): the database is behind this code. Every process applies them at start; start one, or see why it failed.`,
    };
  }
  const ahead = unknown.length > 0 ? ` The database also has ${unknown.length} this code does not know (${unknown.join(', ')}): it is ahead of this code, as during a rolling deploy.` : '';
  return { name: 'migrations', ok: true, detail: `All ${shipped.length} migrations are applied.${ahead}` };
}

/** The Temporal frontend answers GetSystemInfo: a cheap call that needs no namespace or workflow. */
async function temporalCheck(temporal: Pick<Client, 'connection'>): Promise<ReadinessCheck> {
  const { connection } = temporal;
  const answer = await withinDeadline(() => connection.withDeadline(Date.now() + checkTimeoutMs, () => connection.workflowService.getSystemInfo({})));
  if (answer.ok) return { name: 'temporal', ok: true, detail: 'Temporal answers.' };
  return { name: 'temporal', ok: false, detail: answer.timedOut ? `Temporal did not answer within ${seconds}.` : 'Temporal does not answer.' };
}

/**
 * The rate-limit Redis answers PING. While the client is not connected its commands would queue
 * (and rate-limited routes wait on them), so a client that is not `ready` fails at once.
 */
async function redisCheck(redis: RedisPing): Promise<ReadinessCheck> {
  if (redis.status !== 'ready') return { name: 'redis', ok: false, detail: `Redis is not connected (the client is ${redis.status}).` };
  const answer = await withinDeadline(() => redis.ping());
  if (answer.ok) return { name: 'redis', ok: true, detail: 'Redis answers PING.' };
  return { name: 'redis', ok: false, detail: answer.timedOut ? `Redis did not answer PING within ${seconds}.` : 'Redis does not answer PING.' };
}
