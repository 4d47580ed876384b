// What counting costs the hot read: GET /v1/payment-links/:id on the whole app with metrics on
// (a registry, the onResponse hook counting every answer) against the same app with them off, on
// the same database and pool, in alternating rounds (the machine is shared and noisy: only the
// ratio means something).
import { RateService } from '../services/rates/rate-service.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { loadConfig } from '../config/config.js';
import { insertLink } from '../db/payment-link-repo.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { newId, randomToken } from '../domain/ids.js';
import { buildApp } from '../runtime/http-app.js';
import { createMetricsRegistry } from '../runtime/metrics.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { clientsWithinLimit, loadFromChild, median, pinnedServer, type Load } from './load.js';

const seeded = 200;

export async function benchMetrics(rounds = 3, seconds = 5) {
  const db = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'silent', CHAIN_WATCHERS: 'off', TRUST_PROXY: '127.0.0.1', METRICS_TOKEN: randomToken(24) });
  const pool = await openPool(db.url, 10, { preparedStatements: config.databasePreparedStatements });
  try {
    const store = await createStore(pool, 'Bench metrics', config.keyPrefix);
    const key = store.keys.test.secretKey;
    const paths: string[] = [];
    for (let i = 0; i < seeded; i++) {
      const id = newId('paymentLink');
      await insertLink(pool, {
        id, kind: 'payment_link', storeId: store.clientId, environment: 'test', usdtAmount: '25', mobileMoneyAmount: null, kesPerUsdt: null,
        rateSource: null, enabledRails: ['USDT_BSC'], addressIndex: i, tronAddress: null, evmAddress: `0x${randomToken(20).padEnd(40, '0').slice(0, 40)}`,
        solanaAddress: null, solanaReference: null, solanaMint: null, mobileMoneyShortcode: null, description: 'bench', merchantRef: `r${i}`,
        metadata: null, redirectUrl: null, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), watchUntil: new Date(Date.now() + 3_600_000).toISOString(),
      });
      paths.push(`/v1/payment-links/${id}`);
    }
    const registry = createMetricsRegistry();
    const deps = { config, pool, temporal: undefined as never, rates: new RateService({ testKesPerUsdt: '130', sources: [] }) };
    const on = await buildApp({ ...deps, rateLimitStore: memoryRateLimitStore(), metrics: registry.metrics, metricsText: registry.render });
    const off = await buildApp({ ...deps, config: { ...config, metricsToken: undefined }, rateLimitStore: memoryRateLimitStore() });
    await on.listen({ host: '127.0.0.1', port: 0 });
    await off.listen({ host: '127.0.0.1', port: 0 });
    const base = (a: { server: { address(): unknown } }) => `http://127.0.0.1:${(a.server.address() as { port: number }).port}`;
    let clients = 0;
    const perLoad = (s: number) => clientsWithinLimit(600, s, 30_000);
    const load = (b: string, s = seconds) => loadFromChild({ base: b, paths, headers: { 'x-api-key': key }, connections: 50, seconds: s, clients: perLoad(s), clientOffset: (clients += perLoad(s)) });
    const runs: Record<'on' | 'off', Load[]> = { on: [], off: [] };
    await pinnedServer(async () => {
      await load(base(on), 2);
      await load(base(off), 2);
      for (let r = 0; r < rounds; r++) {
        runs.off.push(await load(base(off)));
        runs.on.push(await load(base(on)));
      }
    });
    await on.close();
    await off.close();
    const [a, b] = [median(runs.on), median(runs.off)];
    return { metricsOn: a, metricsOff: b, ratio: Math.round((a.reqPerSec / b.reqPerSec) * 100) / 100 };
  } finally {
    await pool.end();
    await db.drop();
  }
}
