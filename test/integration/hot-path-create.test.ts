import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { RateService } from '../../services/rates/rate-service.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { openPool } from '../../db/pool.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { buildApp } from '../../runtime/http-app.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { httpCall, type HttpRequest } from '../helpers/http.js';
import { StatementCounter } from '../helpers/pg-statement-counter.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * What creating a link costs PostgreSQL, counted on the wire through a counting proxy (statement
 * counts are behaviour, not timing): the store's settings in one read, one statement reserving
 * both address counters and one recording both addresses, the link with its watched addresses in one statement, and after the
 * answer, the mark that its workflow runs (batched with other starts under load).
 */
let stack: Stack;
let counter: StatementCounter;
let store: CreatedStore;
let app: FastifyInstance;
let pool: DatabasePool;
let call: (req: HttpRequest) => ReturnType<typeof httpCall>;

beforeAll(async () => {
  stack = await startStack();
  counter = await StatementCounter.start();
  store = await stack.createStore('Create path');
  await connectAllRails(stack, store.clientId);
  pool = await openPool(counter.urlFor(stack.config.databaseUrl!), 4, { preparedStatements: true });
  app = await buildApp({
    config: stack.config, pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(),
    rates: new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  call = ({ headers, ...req }) => httpCall(base, { ...req, headers: { 'x-api-key': store.keys.test.secretKey, ...headers } });
});
afterAll(async () => {
  await app?.close();
  await pool?.end();
  await counter?.close();
  await stack?.stop();
});

const create = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call({ method: 'POST', url: '/v1/payment-links', payload, headers });

it('creates a two-address link in five statements, none of them a transaction held across round trips', async () => {
  const first = await create({ usdtAmount: '1', enabledRails: ['USDT_BSC', 'USDT_TRON'] }); // the key is known from here on
  await stack.workflowStarted(first.body.id);
  let res: Awaited<ReturnType<typeof create>> | undefined;
  const statements = await counter.during(async () => {
    res = await create({ usdtAmount: '10', enabledRails: ['USDT_BSC', 'USDT_TRON', 'MOBILE_MONEY'] });
    // The start runs after the answer, and records itself after it runs.
    await stack.workflowStarted(res.body.id);
  });
  expect(res!.status).toBe(201);
  const kinds = statements.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 60));
  expect(kinds).toEqual([
    expect.stringMatching(/^SELECT \(SELECT shortcode FROM mobile_mone/),
    expect.stringMatching(/^INSERT INTO link_address_counters/),
    expect.stringMatching(/^INSERT INTO link_addresses/),
    expect.stringMatching(/^WITH link AS \( INSERT INTO payment_links/),
    expect.stringMatching(/^UPDATE payment_links SET workflow_started = true WHERE id = /),
  ]);
  expect(statements.filter((s) => /^(START|BEGIN|COMMIT|DISCARD)/i.test(s.trim()))).toEqual([]);
  // What the one read fed the link: the store's M-Pesa shortcode, and both watched addresses.
  const shortcodes = await stack.pool.any(sql.type(z.object({ link: z.string().nullable(), store: z.string() }))`
    SELECT l.mobile_money_shortcode AS link, c.shortcode AS store FROM payment_links l
    JOIN mobile_money_connections c ON c.store_id = l.store_id AND c.environment = l.environment WHERE l.id = ${res!.body.id}`);
  expect(shortcodes).toEqual([{ link: shortcodes[0]!.store, store: expect.any(String) }]);
  const watched = await stack.pool.any(sql.type(z.object({ family: z.string(), address: z.string(), owner_kind: z.string() }))`
    SELECT family, address, owner_kind FROM watched_addresses WHERE owner_id = ${res!.body.id} ORDER BY family`);
  expect(watched).toEqual([
    { family: 'evm', address: res!.body.bscAddress.toLowerCase(), owner_kind: 'payment_link' },
    { family: 'tron', address: res!.body.tronAddress, owner_kind: 'payment_link' },
  ]);
});

it('looks up an earlier attempt only when an Idempotency-Key could have made one', async () => {
  const fresh = await counter.during(() => create({ usdtAmount: '2', enabledRails: ['USDT_BSC'] }));
  expect(fresh.filter((s) => /FROM payment_links WHERE id/.test(s.replace(/\s+/g, ' ')))).toEqual([]);
  const keyed = await counter.during(() => create({ usdtAmount: '2', enabledRails: ['USDT_BSC'] }, { 'idempotency-key': `k-${Date.now()}` }));
  expect(keyed.filter((s) => /FROM payment_links WHERE id/.test(s.replace(/\s+/g, ' ')))).toHaveLength(1);
});

it('writes the link and its watched addresses together or not at all', async () => {
  // The watched addresses' insert fails: the link must not exist without the watch that pays it.
  await stack.pool.query(sql.unsafe`
    CREATE FUNCTION refuse_watch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`);
  await stack.pool.query(sql.unsafe`
    CREATE TRIGGER refuse_watch BEFORE INSERT ON watched_addresses FOR EACH ROW
    WHEN (NEW.store_id = ${sql.literalValue(store.clientId)}) EXECUTE FUNCTION refuse_watch()`);
  const before = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM payment_links WHERE store_id = ${store.clientId}`);
  try {
    const res = await create({ usdtAmount: '3', enabledRails: ['USDT_TRON'] });
    expect(res.status).toBe(500);
  } finally {
    await stack.pool.query(sql.unsafe`DROP TRIGGER refuse_watch ON watched_addresses`);
    await stack.pool.query(sql.unsafe`DROP FUNCTION refuse_watch()`);
  }
  const after = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM payment_links WHERE store_id = ${store.clientId}`);
  expect(after).toBe(before);
});
