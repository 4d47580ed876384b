import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { RateService } from '../../services/rates/rate-service.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { openPool } from '../../db/pool.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { buildApp } from '../../runtime/http-app.js';
import type { Config } from '../../config/config.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { httpCall, type HttpRequest } from '../helpers/http.js';
import { StatementCounter } from '../helpers/pg-statement-counter.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * What the hot paths cost PostgreSQL, counted on the wire: every statement an API process sends
 * (a connection reset included) goes through a counting proxy. Statement counts are behaviour,
 * not timing: a read that grows a query shows here.
 */
let stack: Stack;
let counter: StatementCounter;
let store: CreatedStore;

interface Instance {
  app: FastifyInstance;
  pool: DatabasePool;
  call(req: HttpRequest & { key?: string }): ReturnType<typeof httpCall>;
}
const instances: Instance[] = [];

/** Another API process on the same database, through the counting proxy, as behind a load balancer. */
async function apiProcess(config: Config = stack.config): Promise<Instance> {
  const pool = await openPool(counter.urlFor(stack.config.databaseUrl!), 4, { preparedStatements: true });
  const rates = new RateService({ testKesPerUsdt: config.testKesPerUsdt, sources: [] });
  const app = await buildApp({ config, pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const instance: Instance = {
    app, pool,
    call: ({ key, headers, ...req }) => httpCall(baseUrl, { ...req, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } }),
  };
  instances.push(instance);
  return instance;
}

beforeAll(async () => {
  stack = await startStack();
  counter = await StatementCounter.start();
  store = await stack.createStore('Hot paths');
  await connectAllRails(stack, store.clientId);
});
afterAll(async () => {
  for (const i of instances) {
    await i.app.close();
    await i.pool.end();
  }
  await counter?.close();
  await stack?.stop();
});

describe('reads', () => {
  it('GET /v1/payment-links/:id is one statement, with no connection reset, once the key is known', async () => {
    const api = await apiProcess();
    const key = store.keys.test.secretKey;
    const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '12.5', enabledRails: ['USDT_BSC', 'MOBILE_MONEY'] } });
    expect(created.status).toBe(201);
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${created.body.id}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } });
    expect(paid.status).toBe(200);
    const first = await api.call({ method: 'GET', url: `/v1/payment-links/${created.body.id}`, key });
    expect(first.status).toBe(200);
    // The link with its payments, the same as the process that wrote it answers.
    expect(first.body).toEqual((await stack.request({ method: 'GET', url: `/v1/payment-links/${created.body.id}`, key })).body);
    expect(first.body.payments).toEqual([expect.objectContaining({ rail: 'USDT_BSC', state: 'confirmed' })]);

    for (let i = 0; i < 5; i++) {
      const statements = await counter.during(async () => {
        const res = await api.call({ method: 'GET', url: `/v1/payment-links/${created.body.id}`, key });
        expect(res.status).toBe(200);
      });
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatch(/FROM payment_links/);
    }
    // A link of another store is a 404 for the same single statement.
    const other = await stack.createStore('Other hot');
    const foreign = await stack.request({ method: 'POST', url: '/v1/payment-links', key: other.keys.test.secretKey, payload: { mobileMoneyAmount: 100, enabledRails: ['MOBILE_MONEY'] } });
    if (foreign.status === 201) {
      const statements = await counter.during(async () => {
        expect((await api.call({ method: 'GET', url: `/v1/payment-links/${foreign.body.id}`, key })).status).toBe(404);
      });
      expect(statements).toHaveLength(1);
    }
    expect(counter.statements.filter((s) => /DISCARD/i.test(s))).toEqual([]);
  });

  it('GET /v1/invoices/:id is one statement for a 200 and for a 304', async () => {
    const api = await apiProcess();
    const invoice = await stack.request({ method: 'POST', url: '/v1/invoices', key: store.keys.test.secretKey, payload: { amount: '3', network: 'BSC' } });
    expect(invoice.status).toBe(201);
    const url = `/v1/invoices/${invoice.body.id}`;
    let etag = '';
    const full = await counter.during(async () => {
      const res = await api.call({ method: 'GET', url });
      expect(res.status).toBe(200);
      etag = String(res.headers.etag);
    });
    expect(full).toHaveLength(1);
    const unchanged = await counter.during(async () => {
      expect((await api.call({ method: 'GET', url, headers: { 'if-none-match': etag } })).status).toBe(304);
    });
    expect(unchanged).toHaveLength(1);
  });
  it("the checkout's poll (GET /v1/checkout/:id) is one statement, open or closed", async () => {
    const api = await apiProcess();
    const key = store.keys.test.secretKey;
    const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '4', enabledRails: ['USDT_BSC', 'MOBILE_MONEY'] } });
    expect(link.status).toBe(201);
    const poll = async (status: string) => {
      const statements = await counter.during(async () => {
        const res = await api.call({ method: 'GET', url: `/v1/checkout/${link.body.id}` });
        expect([res.status, res.body.status]).toEqual([200, status]);
      });
      expect(statements).toHaveLength(1);
    };
    await poll('PENDING');
    expect((await stack.request({ method: 'POST', url: `/v1/payment-links/${link.body.id}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } })).status).toBe(200);
    await poll('CONFIRMED');
  });
});

describe('keys', () => {
  it('a known key costs no statement, and a key revoked on one process is refused by every other within seconds', async () => {
    const config = { ...stack.config, apiKeyCacheSeconds: 2 };
    const [a, b] = [await apiProcess(config), await apiProcess(config)];
    const s = await stack.createStore('Revoked everywhere');
    const leaked = await a.call({ method: 'POST', url: '/v1/keys', key: s.keys.test.secretKey, payload: { name: 'leaked' } });
    expect(leaked.status).toBe(201);
    expect((await b.call({ method: 'GET', url: '/v1/keys', key: leaked.body.key })).status).toBe(200);
    // Remembered: the next request reads the keys it lists, nothing about the key itself.
    const listed = await counter.during(async () => {
      expect((await b.call({ method: 'GET', url: '/v1/keys', key: leaked.body.key })).status).toBe(200);
    });
    expect(listed.filter((q) => /key_hash/.test(q))).toEqual([]);

    expect((await a.call({ method: 'POST', url: `/v1/keys/${leaked.body.id}/revoke`, key: s.keys.test.secretKey, payload: {} })).status).toBe(200);
    // The process that revoked it refuses it at once; the other within its two seconds.
    expect((await a.call({ method: 'GET', url: '/v1/keys', key: leaked.body.key })).body.error.code).toBe('api_key_revoked');
    const refusedAfter = Date.now();
    await eventually(async () => {
      const res = await b.call({ method: 'GET', url: '/v1/keys', key: leaked.body.key });
      return res.status === 401 && res.body.error.code === 'api_key_revoked' ? true : undefined;
    }, 'the other process to refuse the revoked key', 10_000);
    expect(Date.now() - refusedAfter).toBeLessThan(5_000);
    // And a refusal is never remembered: the store's other key still works on both.
    expect((await b.call({ method: 'GET', url: '/v1/keys', key: s.keys.test.secretKey })).status).toBe(200);
  });

  it("never reuses a rolled key's check past the end of its grace period", async () => {
    const [a, b] = [await apiProcess(), await apiProcess({ ...stack.config, apiKeyCacheSeconds: 60 })];
    const s = await stack.createStore('Grace ends');
    const id = (await a.call({ method: 'GET', url: '/v1/keys', key: s.keys.test.secretKey })).body.data.find((k: any) => k.kind === 'secret').id;
    // A grace of about three seconds; b learns of the key only after the roll, and remembers it
    // for a minute at most, but never past the grace period's end.
    const rolled = await a.call({ method: 'POST', url: `/v1/keys/${id}/roll`, key: s.keys.test.secretKey, payload: { graceHours: 0.001 } });
    expect(rolled.status).toBe(200);
    expect((await b.call({ method: 'GET', url: '/v1/keys', key: s.keys.test.secretKey })).status).toBe(200);
    const rolledAt = Date.now();
    await eventually(async () => {
      const res = await b.call({ method: 'GET', url: '/v1/keys', key: s.keys.test.secretKey });
      return res.status === 401 ? res : undefined;
    }, 'the rolled key to stop working at the end of its grace', 30_000);
    expect(Date.now() - rolledAt).toBeLessThan(20_000);
  });
});

describe('creation', () => {
  it("takes links' addresses without holding a key's counter across round trips, with no gap and no repeat", async () => {
    const api = await apiProcess();
    const s = await stack.createStore('Counters');
    await connectAllRails(stack, s.clientId);
    const from = counter.log.length;
    const created = await Promise.all(Array.from({ length: 16 }, (_, i) =>
      api.call({ method: 'POST', url: '/v1/payment-links', key: s.keys.test.secretKey, payload: { usdtAmount: '1', enabledRails: ['USDT_TRON', 'USDT_BSC'], merchantRef: `c${i}` } })));
    expect(created.map((r) => r.status)).toEqual(Array(16).fill(201));
    // The counters were advanced, each time by a statement that committed on its own: one per
    // link, reserving the next index of both its keys (db/link-address-repo.ts).
    expect(counter.log.slice(from).filter((q) => /link_address_counters/.test(q.sql)).length).toBeGreaterThanOrEqual(16);
    expect(counter.inTransaction(/link_address_counters/, from)).toEqual([]);
    // Sixteen links, sixteen distinct addresses per family, at indexes 0 to 15.
    for (const family of ['tron', 'evm'] as const) {
      const indexes = await stack.pool.anyFirst(sql.type(z.object({ i: z.number() }))`
        SELECT a.derivation_index AS i FROM link_addresses a JOIN payment_links l ON l.id = a.owner_id
        WHERE l.store_id = ${s.clientId} AND a.family = ${family} ORDER BY 1`);
      expect(indexes).toEqual(Array.from({ length: 16 }, (_, i) => i));
    }
    const addresses = new Set(created.flatMap((r) => [r.body.tronAddress, r.body.bscAddress]));
    expect(addresses.size).toBe(32);
  });
});
