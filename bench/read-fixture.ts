// The hot read's fixture, shared by the benches that serve GET /v1/payment-links/:id from the whole
// app (metrics.ts, observability.ts): a fresh database, a store, and seeded links to read.
import { RateService } from '../services/rates/rate-service.js';
import { loadConfig, type Config } from '../config/config.js';
import { insertLink } from '../db/payment-link-repo.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { newId, randomToken } from '../domain/ids.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { clientsWithinLimit, loadFromChild, type Load } from './load.js';

const seeded = 200;

export interface ReadFixture {
  /** The seeded database, for a server in another process (bench/observability-server.ts). */
  databaseUrl: string;
  config: Config;
  deps: { config: Config; pool: Awaited<ReturnType<typeof openPool>>; temporal: never; rates: RateService };
  /** A load of `seconds` on `base` over the seeded links, from fresh client addresses each time (rate limits). */
  load(base: string, seconds: number): Promise<Load>;
  close(): Promise<void>;
}

export async function readFixture(name: string): Promise<ReadFixture> {
  const db = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: db.url, PORT: '0', LOG_LEVEL: 'silent', CHAIN_WATCHERS: 'off', TRUST_PROXY: '127.0.0.1', METRICS_TOKEN: randomToken(24) });
  const pool = await openPool(db.url, 10, { preparedStatements: config.databasePreparedStatements });
  const store = await createStore(pool, name, config.keyPrefix);
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
  let clients = 0;
  const perLoad = (s: number) => clientsWithinLimit(600, s, 30_000);
  return {
    databaseUrl: db.url,
    config,
    deps: { config, pool, temporal: undefined as never, rates: new RateService({ testKesPerUsdt: '130', sources: [] }) },
    async load(base, seconds) {
      const result = await loadFromChild({ base, paths, headers: { 'x-api-key': key }, connections: 50, seconds, clients: perLoad(seconds), clientOffset: (clients += perLoad(seconds)) });
      // A refused or failed answer would make a round cheap for the wrong reason: stop the bench instead.
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${base}: ${result.non2xx} answers of 400 or more and ${result.errors} errors in a round`);
      return result;
    },
    async close() {
      await pool.end();
      await db.drop();
    },
  };
}
