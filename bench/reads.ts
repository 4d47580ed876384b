// The read hot paths through the whole app against bare baselines on the same PostgreSQL, in one
// run, alternating rounds (the machine is shared and noisy: only the ratios mean something):
//   GET /v1/payment-links/:id   vs  bare Fastify + pg.Pool(10) + `SELECT * FROM payment_links WHERE id = $1`
//   GET /v1/invoices/:id (200)  vs  the same bare route
//   GET /v1/invoices/:id (304)  vs  the same bare route
// 500 links and 500 invoices are seeded directly, and requests rotate over them.
import Fastify from 'fastify';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { RateService } from '../services/rates/rate-service.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { loadConfig } from '../config/config.js';
import { insertLink } from '../db/payment-link-repo.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { newId, randomToken } from '../domain/ids.js';
import { buildApp } from '../runtime/http-app.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { httpCall } from '../test/helpers/http.js';
import { clientAddress, clientsWithinLimit, loadFromChild, median, pinnedServer, processCpuMs, withEventLoopDelay, type EventLoopDelay, type Load } from './load.js';

const seeded = 500;

/** CPU seconds used so far by PostgreSQL's processes (Linux /proc; 0 elsewhere). */
function postgresCpuSeconds(): number {
  let ms = 0;
  try {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') ms += processCpuMs(Number(pid));
      } catch {
        // the process ended meanwhile
      }
    }
  } catch {
    return 0;
  }
  return ms / 1000;
}

type Measured = Load & EventLoopDelay & { nodeCpuUsPerReq: number; pgCpuUsPerReq: number };

/**
 * Runs `work` and adds the CPU time this process and PostgreSQL spent per request to its result,
 * and this (serving) process's event-loop delay during it.
 */
async function withCpu(work: () => Promise<Load>): Promise<Measured> {
  const node0 = process.cpuUsage();
  const pg0 = postgresCpuSeconds();
  const t0 = Date.now();
  const l = await withEventLoopDelay(work);
  const node = process.cpuUsage(node0);
  const requests = (l.reqPerSec * (Date.now() - t0)) / 1000;
  return {
    ...l,
    nodeCpuUsPerReq: Math.round((node.user + node.system) / requests),
    pgCpuUsPerReq: Math.round(((postgresCpuSeconds() - pg0) * 1e6) / requests),
  };
}
// Client addresses: each load gets clients of its own, enough that none passes the tightest limit
// here (GET /v1/invoices/:id, 300 a minute) at up to 15,000 requests a second, so the limiter
// counts every request on an entry it holds, as for real clients within their budgets (see
// bench/http.ts for why not one client per request).
const clientsPerLoad = (seconds: number) => clientsWithinLimit(300, seconds, 30_000);
let clients = 0;

export async function benchReads(rounds = 3, seconds = 5) {
  const db = await createTestDatabase();
  const config = loadConfig({ DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS, DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'silent', CHAIN_WATCHERS: 'off', TRUST_PROXY: '127.0.0.1' });
  // As the service opens it: named statements unless DATABASE_PREPARED_STATEMENTS=false.
  const pool = await openPool(db.url, 10, { preparedStatements: config.databasePreparedStatements });
  const bareDb = new pg.Pool({ connectionString: db.url, max: 10 });
  try {
    const store = await createStore(pool, 'Bench reads', config.keyPrefix);
    const key = store.keys.test.secretKey;
    const ids = { link: [] as string[], invoice: [] as string[] };
    for (const kind of ['payment_link', 'invoice'] as const) {
      for (let i = 0; i < seeded; i++) {
        const id = newId(kind === 'invoice' ? 'invoice' : 'paymentLink');
        await insertLink(pool, {
          id, kind, storeId: store.clientId, environment: 'test', usdtAmount: '25', mobileMoneyAmount: null, kesPerUsdt: null,
          rateSource: null, enabledRails: ['USDT_BSC'], addressIndex: i, tronAddress: null, evmAddress: `0x${randomToken(20).padEnd(40, '0').slice(0, 40)}`,
          solanaAddress: null, solanaReference: null, solanaMint: null, mobileMoneyShortcode: null, description: 'bench', merchantRef: `r${i}`,
          metadata: null, redirectUrl: null, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), watchUntil: new Date(Date.now() + 3_600_000).toISOString(),
        });
        (kind === 'invoice' ? ids.invoice : ids.link).push(id);
      }
    }
    const app = await buildApp({
      config, pool, temporal: undefined as never, rates: new RateService({ testKesPerUsdt: '130', sources: [] }),
      // The limiter counts every request (X-Forwarded-For from a trusted proxy names the client).
      rateLimitStore: memoryRateLimitStore(),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const bare = Fastify();
    bare.get('/row/:id', async (request) => (await bareDb.query('SELECT * FROM payment_links WHERE id = $1', [(request.params as { id: string }).id])).rows[0]);
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const base = (a: { server: { address(): unknown } }) => `http://127.0.0.1:${(a.server.address() as { port: number }).port}`;

    const linkPaths = ids.link.map((id) => `/v1/payment-links/${id}`);
    const invoicePaths = ids.invoice.map((id) => `/v1/invoices/${id}`);
    const barePaths = ids.link.map((id) => `/row/${id}`);
    const etags: string[] = [];
    for (const path of invoicePaths) {
      const res = await httpCall(base(app), { method: 'GET', url: path, headers: { 'x-forwarded-for': clientAddress(clients++) } });
      if (res.status !== 200) throw new Error(`invoice ${path}: ${res.status}`);
      etags.push(String(res.headers.etag));
    }
    // The 304 load sends each invoice's current ETag (wrk counts no 304 as an error, so check one).
    const unchanged = await httpCall(base(app), { method: 'GET', url: invoicePaths[0]!, headers: { 'x-forwarded-for': clientAddress(clients++), 'if-none-match': etags[0]! } });
    if (unchanged.status !== 304) throw new Error(`invoice with its ETag: ${unchanged.status}, not 304`);
    const ok = <T extends Load>(l: T, what: string): T => {
      if (l.non2xx > 0 || l.errors > 0) throw new Error(`${what}: ${l.non2xx} answers of 400 or more, ${l.errors} errors`);
      return l;
    };
    const load = (b: string, paths: string[], headers: Record<string, string>, perPath?: Array<Record<string, string>>, s = seconds) =>
      loadFromChild({ base: b, paths, headers, perPath, connections: 50, seconds: s, clients: clientsPerLoad(s), clientOffset: (clients += clientsPerLoad(s)) });
    let profile: unknown;
    const runs: Record<'link' | 'invoice200' | 'invoice304' | 'bare', Measured[]> = { link: [], invoice200: [], invoice304: [], bare: [] };
    // This process serves on one core, the load generator runs on the other (bench/load.ts).
    await pinnedServer(async () => {
      await load(base(app), linkPaths, { 'x-api-key': key }, undefined, 2); // warm-up
      await load(base(app), invoicePaths, {}, undefined, 2);
      await load(base(bare), barePaths, {}, undefined, 2);
      for (let r = 0; r < rounds; r++) {
        runs.link.push(ok(await withCpu(() => load(base(app), linkPaths, { 'x-api-key': key })), 'link'));
        runs.bare.push(ok(await withCpu(() => load(base(bare), barePaths, {})), 'bare'));
        runs.invoice200.push(ok(await withCpu(() => load(base(app), invoicePaths, {})), 'invoice200'));
        runs.invoice304.push(ok(await withCpu(() => load(base(app), invoicePaths, {}, etags.map((e) => ({ 'if-none-match': e })))), 'invoice304'));
      }
      // `--profile`: one more link load with this process's CPU sampled (where a read's time goes).
      if (process.argv.includes('--profile')) {
        const { startCpuProfile } = await import('./cpu-profile.js');
        const profiling = await startCpuProfile(100);
        ok(await load(base(app), linkPaths, { 'x-api-key': key }), 'link, profiled');
        const out = process.argv.indexOf('--profile-out');
        profile = await profiling.stop(out > 0 ? `${process.argv[out + 1]}-link.cpuprofile` : undefined);
      }
    });
    await app.close();
    await bare.close();
    const b = median(runs.bare);
    const row = (l: Measured[]) => ({ ...median(l), ratio: Math.round((median(l).reqPerSec / b.reqPerSec) * 100) / 100 });
    return {
      getLink: row(runs.link),
      getInvoice200: row(runs.invoice200),
      getInvoice304: row(runs.invoice304),
      barePrimaryKeyRoute: b,
      ...(profile ? { profileGetLink: profile } : {}),
    };
  } finally {
    await pool.end();
    await bareDb.end();
    await db.drop();
  }
}
