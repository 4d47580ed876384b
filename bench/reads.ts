// The read hot paths through the whole app against bare baselines on the same PostgreSQL, in one
// run, alternating rounds (the machine is shared and noisy: only the ratios mean something):
//   GET /v1/payment-links/:id   vs  bare Fastify + pg.Pool(10) + `SELECT * FROM payment_links WHERE id = $1`
//   GET /v1/invoices/:id (200)  vs  the same bare route
//   GET /v1/invoices/:id (304)  vs  the same bare route
// 500 links and 500 invoices are seeded directly, and requests rotate over them.
import Fastify from 'fastify';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { RateService } from '../activities/rates/rate-service.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { loadConfig } from '../config/config.js';
import { insertLink } from '../db/payment-link-repo.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { newId, randomToken } from '../domain/ids.js';
import { buildApp } from '../runtime/http-app.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { httpCall } from '../test/helpers/http.js';
import { clientAddress, loadFromChild, median, processCpuMs, withEventLoopDelay, type EventLoopDelay, type Load } from './load.js';

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
let clients = 0;

export async function benchReads(rounds = 3, seconds = 5) {
  const db = await createTestDatabase();
  const pool = await openPool(db.url, 10);
  const bareDb = new pg.Pool({ connectionString: db.url, max: 10 });
  const config = loadConfig({ DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'silent', CHAIN_WATCHERS: 'off', TRUST_PROXY: '127.0.0.1' });
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
      // The limiter counts every request; each comes from another client (X-Forwarded-For from a
      // trusted proxy), so its per-IP verdict never stops the load generator.
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
    const ok = <T extends Load>(l: T, what: string): T => {
      if ((l.non2xx > 0 && what !== 'invoice304') || l.errors > 0) throw new Error(`${what}: ${l.non2xx} answers were not 2xx, ${l.errors} errors`);
      return l;
    };
    const load = (b: string, paths: string[], headers: Record<string, string>, perPath?: Array<Record<string, string>>, s = seconds) =>
      loadFromChild({ base: b, paths, headers, perPath, connections: 50, seconds: s, clientOffset: (clients += 70_000) });
    const runs: Record<'link' | 'invoice200' | 'invoice304' | 'bare', Measured[]> = { link: [], invoice200: [], invoice304: [], bare: [] };
    await load(base(app), linkPaths, { 'x-api-key': key }, undefined, 2); // warm-up
    for (let r = 0; r < rounds; r++) {
      runs.link.push(ok(await withCpu(() => load(base(app), linkPaths, { 'x-api-key': key })), 'link'));
      runs.bare.push(ok(await withCpu(() => load(base(bare), barePaths, {})), 'bare'));
      runs.invoice200.push(ok(await withCpu(() => load(base(app), invoicePaths, {})), 'invoice200'));
      runs.invoice304.push(ok(await withCpu(() => load(base(app), invoicePaths, {}, etags.map((e) => ({ 'if-none-match': e })))), 'invoice304'));
    }
    await app.close();
    await bare.close();
    const b = median(runs.bare);
    const row = (l: Measured[]) => ({ ...median(l), ratio: Math.round((median(l).reqPerSec / b.reqPerSec) * 100) / 100 });
    return {
      getLink: row(runs.link),
      getInvoice200: row(runs.invoice200),
      getInvoice304: row(runs.invoice304),
      barePrimaryKeyRoute: b,
    };
  } finally {
    await pool.end();
    await bareDb.end();
    await db.drop();
  }
}
