import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool, sql, type DatabasePool, type Interceptor, type QueryResultRow } from 'slonik';
import { eventDeliveries } from '../../db/link-timeline-repo.js';
import { listLinks } from '../../db/payment-link-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** `GET /v1/payment-links?merchantRef=…`: the filter the API and the dashboard's search share. */
let stack: Stack;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Refs');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test');
}, 60_000);
afterAll(async () => stack?.stop());

const create = (payload: Record<string, unknown>, k = key) =>
  stack.request({ method: 'POST', url: '/v1/payment-links', key: k, payload: { usdtAmount: '2', enabledRails: ['USDT_BSC'], ...payload } });
const list = (query: string, k = key) => stack.request({ method: 'GET', url: `/v1/payment-links?${query}`, key: k });

describe('GET /v1/payment-links?merchantRef=', () => {
  it('lists only the links with exactly that reference, newest first, with status and pages', async () => {
    const a1 = (await create({ merchantRef: 'order-1' })).body.id as string;
    const a2 = (await create({ merchantRef: 'order-1' })).body.id as string;
    await create({ merchantRef: 'order-10' });
    await create({ merchantRef: 'ORDER-1' });
    await create({});
    const res = await list('merchantRef=order-1');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 2, page: 1, limit: 20, hasMore: false });
    expect(res.body.data.map((l: { id: string }) => l.id)).toEqual([a2, a1]);

    const paged = await list('merchantRef=order-1&limit=1&page=2');
    expect(paged.body).toMatchObject({ total: 2, hasMore: false, data: [{ id: a1, merchantRef: 'order-1' }] });
    expect((await list('merchantRef=order-1&status=CONFIRMED')).body).toMatchObject({ total: 0, data: [] });
    expect((await list('merchantRef=order-1&status=PENDING')).body.total).toBe(2);
    expect((await list('merchantRef=nobody')).body).toMatchObject({ total: 0, data: [] });
  });

  it("never shows another store's links with the same reference", async () => {
    const other = await stack.createStore('Other refs');
    await connectAllRails(stack, other.clientId, 'test');
    await create({ merchantRef: 'shared-ref' }, other.keys.test.secretKey);
    expect((await list('merchantRef=shared-ref')).body).toMatchObject({ total: 0, data: [] });
    expect((await list('merchantRef=shared-ref', other.keys.test.secretKey)).body.total).toBe(1);
  });

  it('refuses an empty or over-long reference with the parameter named, as the create body does', async () => {
    const empty = await list('merchantRef=');
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: 'invalid_field', param: 'merchantRef' });
    const long = await list(`merchantRef=${'x'.repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.body.error).toMatchObject({ code: 'invalid_field', param: 'merchantRef' });
  });
});

/** The plans of every statement `work` sends (not executed: EXPLAIN without ANALYZE), as JSON text. */
async function plansOf(work: (explaining: DatabasePool) => Promise<unknown>): Promise<string[]> {
  const plans: string[] = [];
  const explain: Interceptor = {
    name: 'explain',
    transformQuery: (_context, query) => ({ ...query, sql: `EXPLAIN (FORMAT JSON) ${query.sql}` }),
    afterQueryExecution: (_context, _query, result) => {
      plans.push(JSON.stringify((result.rows[0] as QueryResultRow)['QUERY PLAN']));
      return null;
    },
  };
  const explaining = await createPool(stack.config.databaseUrl!, { interceptors: [explain], maximumPoolSize: 1 });
  try {
    await work(explaining).catch(() => undefined); // the plan rows do not parse as the repository's rows
  } finally {
    await explaining.end();
  }
  return plans;
}

describe('the reads behind the list and the detail page use their indexes (migration 0023)', () => {
  it('plans the merchantRef page and its count on payment_links_merchant_ref_idx with a store of 60,000 links', async () => {
    // One store with many links, most with a reference: without the index the planner walks the
    // store's whole list index filtering on merchant_ref.
    await stack.pool.query(sql.unsafe`
      INSERT INTO payment_links (id, store_id, environment, status, usdt_amount, enabled_rails, merchant_ref, expires_at, workflow_started)
      SELECT 'pl_seed' || g, ${store.clientId}, 'test', 'PENDING', 1, '{USDT_BSC}', 'seed-' || (g % 20000), now() + interval '1 day', true
      FROM generate_series(1, 60000) g`);
    await stack.pool.query(sql.unsafe`ANALYZE payment_links`);
    const plans = await plansOf((p) => listLinks(p, { storeId: store.clientId, environment: 'test', merchantRef: 'seed-42', page: 1, limit: 20 }));
    expect(plans).toHaveLength(2);
    for (const plan of plans) expect(plan).toContain('"Index Name":"payment_links_merchant_ref_idx"');
  });

  it("plans a link's webhook attempts on webhook_deliveries_event_idx with 60,000 deliveries", async () => {
    await stack.pool.query(sql.unsafe`
      INSERT INTO webhook_endpoints (id, store_id, environment, url, enabled_events, secret)
      VALUES ('we_seed', ${store.clientId}, 'test', 'https://shop.example/hooks', '{payment_link.confirmed}', 'v1:seed')`);
    await stack.pool.query(sql.unsafe`
      INSERT INTO events (id, store_id, environment, type, dedupe_key, payload)
      SELECT 'evt_seed' || g, ${store.clientId}, 'test', 'payment_link.confirmed', 'seed:' || g, '{}' FROM generate_series(1, 20000) g`);
    await stack.pool.query(sql.unsafe`
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, attempt, trigger, status)
      SELECT 'wd_seed' || g, 'we_seed', 'evt_seed' || (g % 20000 + 1), g / 20000 + 1, 'automatic', 'failed' FROM generate_series(1, 60000) g`);
    await stack.pool.query(sql.unsafe`ANALYZE webhook_deliveries`);
    const [plan] = await plansOf((p) => eventDeliveries(p, 'evt_seed42'));
    expect(plan).toContain('"Index Name":"webhook_deliveries_event_idx"');
  });
});
