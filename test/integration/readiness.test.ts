import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { sql } from 'slonik';
import { loggerOptions } from '../../api/plugins/log-redaction.js';
import { redisRateLimitStore, type RateLimitStore } from '../../api/plugins/rate-limit.js';
import { rateServiceFor } from '../../services/rates/rate-service.js';
import { openPool, type DatabasePool } from '../../db/pool.js';
import { shippedMigrations } from '../../db/migrate.js';
import { buildApp } from '../../runtime/http-app.js';
import { ensureChainWatcher } from '../../temporal-client/index.js';
import { deployTestToken, startAnvil, type Anvil } from '../helpers/anvil.js';
import { startFlakyRpc, type FlakyRpc } from '../helpers/flaky-rpc.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { TcpSwitch } from '../helpers/tcp-switch.js';
import { eventually } from '../helpers/wait.js';

/**
 * GET /ready on real parts, each behind a TCP switch the test cuts, stalls and restores:
 * PostgreSQL, the Temporal frontend, Redis (the rate-limit store) and the only RPC of a rail whose
 * chain watcher runs in this process (anvil). Each going away turns /ready into a 503 that names
 * it, and back into a 200 when it returns; so does the watcher trailing the head by more than its
 * bound, and the database lacking a migration. A dependency that accepts connections and never
 * answers still gets an answer. Every URL carries a credential, and no answer or log line shows
 * any of them, nor a host or port.
 */
const secrets = { pg: 'pg-pass-5d1c9e', redis: 'redis-pass-7a0b3f', rpc: 'rpc-key-e42c81' };
let anvil: Anvil;
let stack: Stack;
let pgSwitch: TcpSwitch;
let temporalSwitch: TcpSwitch;
let redisSwitch: TcpSwitch;
let rpcSwitch: TcpSwitch;
let rpc: FlakyRpc;
let pool: DatabasePool;
let rateLimitStore: RateLimitStore;
let app: FastifyInstance;
let base: string;
const logLines: string[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  const usdt = await deployTestToken(anvil, { decimals: 18 });
  rpcSwitch = await TcpSwitch.start(new URL(anvil.url).host);
  // The rail's one RPC: a proxy that can hold answers (a slow node), in front of the switch that can cut it.
  rpc = await startFlakyRpc(`http://${rpcSwitch.address}`);
  temporalSwitch = await TcpSwitch.start(process.env.MALIPO_TEST_TEMPORAL_ADDRESS!);
  stack = await startStack(
    {
      CHAIN_POLL_MS: '100',
      // A short bound so the test need not wait a minute for a watcher that stopped reading.
      READY_CHAIN_STALE_SECONDS: '5',
      RPC_URL_USDT_BSC_TEST: `${rpc.url}/?apikey=${secrets.rpc}`,
      USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
    },
    { temporalAddress: temporalSwitch.address },
  );
  // The app under test reaches PostgreSQL and Redis through switches, with a password in each URL.
  const dbUrl = new URL(stack.config.databaseUrl!);
  pgSwitch = await TcpSwitch.start(`${dbUrl.hostname}:${dbUrl.port || 5432}`);
  dbUrl.host = pgSwitch.address;
  dbUrl.password = secrets.pg;
  pool = await openPool(dbUrl.toString(), 3);
  redisSwitch = await TcpSwitch.start('127.0.0.1:6379');
  rateLimitStore = redisRateLimitStore(`redis://default:${secrets.redis}@${redisSwitch.address}`);
  rateLimitStore.redis!.on('error', () => undefined);
  const logger = pino(loggerOptions('info'), new Writable({ write: (chunk: Buffer, _enc, done) => void (logLines.push(chunk.toString()), done()) }));
  app = await buildApp({ config: stack.config, pool, temporal: stack.temporal, rateLimitStore, rates: rateServiceFor(stack.config, pool), logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  // The rail's watcher ticks in this process's workers, through the RPC switch.
  await ensureChainWatcher({ client: stack.temporal, taskQueuePrefix: stack.config.temporal.taskQueuePrefix }, 'USDT_BSC', 'test', 100);
}, 120_000);

afterAll(async () => {
  for (const s of [pgSwitch, temporalSwitch, redisSwitch, rpcSwitch]) s?.onAgain();
  await app?.close();
  await rateLimitStore?.close();
  await pool?.end().catch(() => undefined);
  await stack?.stop();
  rpc?.release();
  for (const s of [pgSwitch, temporalSwitch, redisSwitch, rpcSwitch]) await s?.close();
  await rpc?.close();
  await anvil?.stop();
});

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  watcher?: { failing: string | null; lastReadSecondsAgo: number | null; headBlock: number | null; readToBlock: number | null; lagBlocks: number | null; bounds: { staleSeconds: number; lagBlocks: number } };
}

/** Every address a URL of this test names: none may appear in an answer. */
const addresses = () => [pgSwitch, temporalSwitch, redisSwitch, rpcSwitch].map((s) => s.address).concat([new URL(anvil.url).host, new URL(rpc.url).host]);

/** GET /ready, checked for credentials and addresses on every call. */
async function ready(): Promise<{ status: number; checks: Check[]; res: HttpResponse }> {
  const res = await httpCall(base, { method: 'GET', url: '/ready' });
  for (const secret of [...Object.values(secrets), ...addresses()]) expect(res.text).not.toContain(secret);
  expect(res.body.ready).toBe(res.status === 200);
  return { status: res.status, checks: res.body.checks as Check[], res };
}

const failing = (checks: Check[]) => checks.filter((c) => !c.ok).map((c) => c.name).sort();

/** The checks of a ready process: the watcher's appear once it has ticked here. */
const everyCheck = ['database', 'migrations', 'temporal', 'redis', 'chain-id:USDT_BSC:test', 'providers:USDT_BSC:test', 'watcher:USDT_BSC:test'];

/** /ready once it answers `status` with exactly these checks failing (and, when ready, every check there). */
async function until(status: number, failed: string[], what: string, timeoutMs = 30_000) {
  return eventually(async () => {
    // Polled at a few a second: the probe's own limit is 600 a minute per client.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const r = await ready();
    const present = status !== 200 || everyCheck.every((name) => r.checks.some((c) => c.name === name));
    return r.status === status && present && JSON.stringify(failing(r.checks)) === JSON.stringify([...failed].sort()) ? r : undefined;
  }, what, timeoutMs);
}

/** Ready, with the watcher's last read under a second old: a test that cuts something starts from here. */
const allUp = () =>
  eventually(async () => {
    const r = await until(200, [], 'ready');
    return r.checks.find((c) => c.name === 'watcher:USDT_BSC:test')!.watcher!.lastReadSecondsAgo === 0 ? r : undefined;
  }, 'the watcher to read again', 60_000);

describe('GET /ready', () => {
  it('is 200 with every dependency up, naming each check', async () => {
    const { checks } = await until(200, [], 'the watcher to read its chain');
    expect(checks.map((c) => c.name)).toEqual(expect.arrayContaining(everyCheck));
    const shipped = await shippedMigrations();
    expect(checks.find((c) => c.name === 'migrations')!.detail).toBe(`All ${shipped.length} migrations are applied.`);
    const watcher = checks.find((c) => c.name === 'watcher:USDT_BSC:test')!;
    expect(watcher.detail).toMatch(/^Read to block \d+ of \d+ \(\d+ behind, bound 600\), \d+ s ago \(bound 5 s\)\.$/);
    expect(watcher.watcher).toMatchObject({ failing: null, bounds: { staleSeconds: 5, lagBlocks: 600 } });
    // Liveness is unchanged: it says the process runs and reaches PostgreSQL.
    const health = await httpCall(base, { method: 'GET', url: '/health' });
    expect([health.status, health.body]).toEqual([200, { ok: true, database: true }]);
  });

  it('turns 503 naming the database while PostgreSQL is away, and 200 when it is back', async () => {
    await allUp();
    pgSwitch.off();
    try {
      const down = await until(503, ['database', 'migrations'], 'the database check to fail');
      expect(down.checks.find((c) => c.name === 'database')!.detail).toBe('PostgreSQL does not answer.');
    } finally {
      pgSwitch.onAgain();
    }
    await until(200, [], 'the database check to pass again');
  });

  it('turns 503 naming temporal while the Temporal frontend is away, and 200 when it is back', async () => {
    await allUp();
    temporalSwitch.off();
    try {
      // The watcher's ticks run through the same frontend, so it may stop reading too.
      const down = await eventually(async () => {
        const r = await ready();
        return r.status === 503 && failing(r.checks).includes('temporal') ? r : undefined;
      }, 'the temporal check to fail');
      expect(failing(down.checks).filter((n) => n !== 'watcher:USDT_BSC:test')).toEqual(['temporal']);
      expect(down.checks.find((c) => c.name === 'temporal')!.detail).toMatch(/^Temporal (does not answer|did not answer within 1\.5 s)\.$/);
    } finally {
      temporalSwitch.onAgain();
    }
    await until(200, [], 'the temporal check to pass again', 60_000);
  }, 90_000);

  it('turns 503 naming redis while Redis is away, and 200 when it is back', async () => {
    await allUp();
    redisSwitch.off();
    try {
      const down = await until(503, ['redis'], 'the redis check to fail');
      expect(down.checks.find((c) => c.name === 'redis')!.detail).toMatch(/^Redis (is not connected \(the client is [a-z]+\)|does not answer PING|did not answer PING within 1\.5 s)\.$/);
    } finally {
      redisSwitch.onAgain();
    }
    await until(200, [], 'the redis check to pass again');
  });

  it('turns 503 naming the watcher while the rail\'s only RPC is away, and 200 when it is back', async () => {
    await allUp();
    rpcSwitch.off();
    try {
      // Failing once its ticks have met the cut node (a tick under way when it was cut may end first).
      const watcher = await eventually(async () => {
        const c = (await until(503, ['watcher:USDT_BSC:test'], 'the watcher check to fail')).checks.find((x) => x.name === 'watcher:USDT_BSC:test')!;
        return c.watcher!.failing ? c : undefined;
      }, 'the watcher to fail for its node');
      expect(watcher.detail).toMatch(/^It last read its chain \d+ s ago \(bound 5 s\); its node cannot be reached since \d{4}-\d\d-\d\dT[\d:.]+Z\.$/);
      expect(watcher.watcher).toMatchObject({ failing: 'unreachable' });
      expect(watcher.watcher!.lastReadSecondsAgo).toBeGreaterThanOrEqual(5);
    } finally {
      rpcSwitch.onAgain();
    }
    // An unreachable node is retried with a backoff of up to 30 s (rails/chain/outage.ts).
    await until(200, [], 'the watcher to read again', 60_000);
  }, 90_000);

  it('turns 503 naming the watcher while it trails the head by more than its bound, with the numbers, and 200 once caught up', async () => {
    const { checks } = await allUp();
    // Caught up on an idle chain: it has read to the head.
    const head = checks.find((c) => c.name === 'watcher:USDT_BSC:test')!.watcher!.readToBlock!;
    // 3,000 new blocks. Ticks wait for the head until all are mined; then they read 2,000 blocks
    // (a tick's most), and the node is slow to answer for the rest: the watcher trails by 1,000.
    const holdHead = rpc.fail({ method: 'eth_blockNumber', fault: 'hold' });
    const holdRest = rpc.fail({ method: 'eth_getLogs', when: (params) => BigInt((params[0] as { toBlock: string }).toBlock) > head + 2_000, fault: 'hold' });
    try {
      for (let i = 0; i < 6; i++) await anvil.rpc('anvil_mine', ['0x1f4']);
      holdHead();
      rpc.release();
      const expected = `It trails the head by 1000 blocks (bound 600): read to ${head + 2_000} of ${head + 3_000}.`;
      const watcher = await eventually(async () => {
        const c = (await until(503, ['watcher:USDT_BSC:test'], 'the watcher to trail the head')).checks.find((x) => x.name === 'watcher:USDT_BSC:test')!;
        return c.detail === expected ? c : undefined;
      }, 'the watcher to have read 2,000 of the 3,000 blocks');
      expect(watcher.watcher).toMatchObject({ failing: null, headBlock: head + 3_000, readToBlock: head + 2_000, lagBlocks: 1000, bounds: { lagBlocks: 600 } });
    } finally {
      holdHead();
      holdRest();
      rpc.release();
    }
    await until(200, [], 'the watcher to catch up');
  });

  it('answers while PostgreSQL, Temporal and Redis accept connections and never answer, naming each', async () => {
    await allUp();
    for (const s of [pgSwitch, temporalSwitch, redisSwitch]) s.stall();
    try {
      // No eventually: a check without its deadline would hold this request until the test times out.
      const { status, checks } = await ready();
      expect(status).toBe(503);
      expect(failing(checks)).toEqual(expect.arrayContaining(['database', 'migrations', 'redis', 'temporal']));
      expect(checks.find((c) => c.name === 'database')!.detail).toBe('PostgreSQL did not answer within 1.5 s.');
      expect(checks.find((c) => c.name === 'redis')!.detail).toBe('Redis did not answer PING within 1.5 s.');
    } finally {
      for (const s of [pgSwitch, temporalSwitch, redisSwitch]) s.onAgain();
    }
    await until(200, [], 'ready again', 60_000);
  }, 90_000);

  it('turns 503 naming the first migration the database lacks, and stays 200 for one it does not know', async () => {
    await allUp();
    const shipped = await shippedMigrations();
    const [second, last] = [shipped[1]!, shipped[shipped.length - 1]!];
    await stack.pool.query(sql.unsafe`DELETE FROM schema_migrations WHERE name = ANY(${sql.array([second, last], 'text')})`);
    try {
      const behind = await until(503, ['migrations'], 'the migrations check to fail');
      expect(behind.checks.find((c) => c.name === 'migrations')!.detail).toBe(
        `Migration ${second} is not applied (2 of ${shipped.length} missing): the database is behind this code. Every process applies them at start; start one, or see why it failed.`,
      );
    } finally {
      await stack.pool.query(sql.unsafe`INSERT INTO schema_migrations (name) SELECT unnest(${sql.array([second, last], 'text')})`);
    }
    await stack.pool.query(sql.unsafe`INSERT INTO schema_migrations (name) VALUES ('9999_from_a_newer_release.sql')`);
    try {
      const ahead = await until(200, [], 'ready with a migration from a newer release');
      expect(ahead.checks.find((c) => c.name === 'migrations')!.detail).toBe(
        `All ${shipped.length} migrations are applied. The database also has 1 this code does not know (9999_from_a_newer_release.sql): it is ahead of this code, as during a rolling deploy.`,
      );
    } finally {
      await stack.pool.query(sql.unsafe`DELETE FROM schema_migrations WHERE name = '9999_from_a_newer_release.sql'`);
    }
  });

  it('never logs a credential or an address of the URLs it was given', () => {
    expect(logLines.length).toBeGreaterThan(0);
    const text = logLines.join('');
    for (const secret of [...Object.values(secrets), ...addresses()]) expect(text).not.toContain(secret);
  });
});
