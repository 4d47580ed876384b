import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowNotFoundError } from '@temporalio/client';
import { sql } from 'slonik';
import { z } from 'zod';
import { RateService } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { crashDuring } from '../helpers/crashing-api.js';
import { httpCall } from '../helpers/http.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * Idempotency-Key after a crash, for real: the first attempt runs in an API process that dies by
 * SIGKILL at a chosen point; the retry goes to another API process (the stack's), on the same
 * PostgreSQL and Temporal, as a client's retry behind a load balancer would.
 */
const leaseSeconds = 3;
let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ IDEMPOTENCY_LEASE_SECONDS: String(leaseSeconds) });
});
afterAll(async () => {
  await stack?.stop();
});

async function railedStore(name: string): Promise<CreatedStore> {
  const store = await stack.createStore(name);
  await connectAllRails(stack, store.clientId, 'test');
  return store;
}

const createLink = (store: CreatedStore, key: string, payload: unknown) =>
  stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload, headers: { 'idempotency-key': key } });

const linkRows = (store: CreatedStore) =>
  stack.pool.any(sql.type(z.object({ id: z.string(), status: z.string() }))`SELECT id, status FROM payment_links WHERE store_id = ${store.clientId}`);

const workflowStarted = (id: string) =>
  stack.pool.oneFirst(sql.type(z.object({ s: z.boolean() }))`SELECT workflow_started AS s FROM payment_links WHERE id = ${id}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for the lease of a dead attempt to run out, as its Retry-After says. */
async function waitOutLease(store: CreatedStore, key: string, payload: unknown) {
  const busy = await createLink(store, key, payload);
  expect([busy.status, busy.body.error.code, busy.body.error.type]).toEqual([409, 'idempotency_request_in_progress', 'conflict_error']);
  const retryAfter = Number(busy.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(leaseSeconds);
  await sleep(retryAfter * 1000);
}

/** Every workflow Temporal holds for the store (visibility is eventually consistent: wait for `expected`, then check it stays). */
async function storeWorkflows(store: CreatedStore, expected: number): Promise<string[]> {
  const list = async () => {
    const ids: string[] = [];
    for await (const wf of stack.temporal.workflow.list({ query: `${searchAttributes.store.name} = '${store.clientId}'` })) ids.push(wf.workflowId);
    return ids;
  };
  await eventually(async () => ((await list()).length >= expected ? true : undefined), `${expected} workflows of the store`);
  await sleep(500);
  return list();
}

describe('Idempotency-Key after the process serving it died', () => {
  it('refuses a retry while the dead claim is leased (409 with Retry-After), then runs it once the lease ran out', async () => {
    const store = await railedStore('Crash after claim');
    const payload = { mobileMoneyAmount: 1300, enabledRails: ['MOBILE_MONEY'] };
    await crashDuring(stack, 'after-claim', { method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload, headers: { 'idempotency-key': 'claim-1' } });
    expect(await linkRows(store)).toEqual([]);

    await waitOutLease(store, 'claim-1', payload);
    const retry = await createLink(store, 'claim-1', payload);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ status: 'PENDING', mobileMoneyAmount: 1300, usdtAmount: '10' });
    const replay = await createLink(store, 'claim-1', payload);
    expect([replay.status, replay.headers['idempotent-replayed'], replay.body]).toEqual([201, 'true', retry.body]);
    expect((await linkRows(store)).map((r) => r.id)).toEqual([retry.body.id]);
  }, 90_000);

  it('completes the same link when the process died after writing it and before starting its workflow', async () => {
    const store = await railedStore('Crash after insert');
    const payload = { usdtAmount: '5', enabledRails: ['USDT_BSC', 'MOBILE_MONEY'], merchantRef: 'order-insert' };
    await crashDuring(stack, 'before-workflow-start', { method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload, headers: { 'idempotency-key': 'insert-1' } });
    const [written] = await linkRows(store);
    expect(written).toBeDefined();
    await expect(stack.temporal.workflow.getHandle(`payment-link/${written!.id}`).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

    await waitOutLease(store, 'insert-1', payload);
    const retry = await createLink(store, 'insert-1', payload);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ id: written!.id, usdtAmount: '5', mobileMoneyAmount: 650, merchantRef: 'order-insert' });
    expect((await linkRows(store)).map((r) => r.id)).toEqual([written!.id]);
    expect((await stack.temporal.workflow.getHandle(`payment-link/${written!.id}`).describe()).status.name).toBe('RUNNING');
    expect(await storeWorkflows(store, 1)).toEqual([`payment-link/${written!.id}`]);

    // The link works: its workflow owns it.
    const cancelled = await stack.request({ method: 'POST', url: `/v1/payment-links/${written!.id}/cancel`, key: store.keys.test.secretKey });
    expect([cancelled.status, cancelled.body.status]).toEqual([200, 'CANCELLED']);
  }, 90_000);

  it('answers with the same link, and starts nothing twice, when the process died after starting the workflow and before recording that it runs', async () => {
    const store = await railedStore('Crash after start');
    const payload = { usdtAmount: '7.5', enabledRails: ['USDT_TRON'] };
    // The start runs after the answer: whether the answer got out before the process died is a race.
    await crashDuring(stack, 'after-workflow-start', { method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload, headers: { 'idempotency-key': 'start-1' } });
    const [written] = await linkRows(store);
    const handle = stack.temporal.workflow.getHandle(`payment-link/${written!.id}`);
    const before = await handle.describe();
    expect(await workflowStarted(written!.id)).toBe(false);

    await sleep(leaseSeconds * 1000);
    const retry = await createLink(store, 'start-1', payload);
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ id: written!.id, usdtAmount: '7.5', status: 'PENDING' });
    const get = await stack.request({ method: 'GET', url: `/v1/payment-links/${written!.id}`, key: store.keys.test.secretKey });
    expect(get.body.tronAddress).toBe(retry.body.tronAddress);
    // The retry or the workers find the workflow running and record it; none starts a second.
    await eventually(async () => ((await workflowStarted(written!.id)) ? true : undefined), 'the row to record its running workflow');
    expect((await handle.describe()).runId).toBe(before.runId);
    expect((await linkRows(store)).map((r) => r.id)).toEqual([written!.id]);
    expect(await storeWorkflows(store, 1)).toEqual([`payment-link/${written!.id}`]);
    const replay = await createLink(store, 'start-1', payload);
    expect([replay.headers['idempotent-replayed'], replay.body]).toEqual(['true', retry.body]);
  }, 90_000);

  it('completes the same invoice when the process died after writing it and before starting its workflow', async () => {
    const store = await railedStore('Invoice crash');
    const payload = { amount: '12', network: 'BSC' };
    const key = store.keys.test.secretKey;
    await crashDuring(stack, 'before-workflow-start', { method: 'POST', url: '/v1/invoices', key, payload, headers: { 'idempotency-key': 'inv-1' } });
    const [written] = await linkRows(store);
    expect(written).toBeDefined();

    await sleep(leaseSeconds * 1000);
    const retry = await stack.request({ method: 'POST', url: '/v1/invoices', key, payload, headers: { 'idempotency-key': 'inv-1' } });
    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({ id: written!.id, amount: '12.000000', network: 'BSC', status: 'PENDING' });
    expect((await linkRows(store)).map((r) => r.id)).toEqual([written!.id]);
    expect((await stack.temporal.workflow.getHandle(`invoice/${written!.id}`).describe()).status.name).toBe('RUNNING');
  }, 90_000);
});

describe('Idempotency-Key claims', () => {
  it('keeps the key of a 400 free: the corrected request with the same key creates the link', async () => {
    const store = await railedStore('Validation');
    const bad = await createLink(store, 'fix-1', { usdtAmount: 'ten', enabledRails: ['USDT_BSC'] });
    expect([bad.status, bad.body.error.param]).toEqual([400, 'usdtAmount']);
    const good = await createLink(store, 'fix-1', { usdtAmount: '10', enabledRails: ['USDT_BSC'] });
    expect([good.status, good.text]).toEqual([201, expect.any(String)]);
    const replay = await createLink(store, 'fix-1', { usdtAmount: '10', enabledRails: ['USDT_BSC'] });
    expect([replay.headers['idempotent-replayed'], replay.body.id]).toEqual(['true', good.body.id]);
    expect(await linkRows(store)).toHaveLength(1);
  });

  it('keeps the key of a 400 from a rule the service checks: the same request after connecting the wallet creates the link', async () => {
    const store = await stack.createStore('Rail later');
    const payload = { usdtAmount: '3', enabledRails: ['USDT_TRON'] };
    const refused = await createLink(store, 'rail-1', payload);
    expect([refused.status, refused.body.error.code]).toEqual([400, 'rail_not_available']);
    await connectAllRails(stack, store.clientId, 'test');
    const created = await createLink(store, 'rail-1', payload);
    expect(created.status).toBe(201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
  });

  it('renews the lease while a slow request runs, so a retry past the first lease is still told to wait', async () => {
    const store = await railedStore('Slow');
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slowRates = { kesPerUsdt: async () => (await released, { kesPerUsdt: '130', source: 'fixed-test-rate', fetchedAtMs: Date.now() }) };
    const slowApp = await buildApp({
      config: stack.config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates: slowRates as unknown as RateService,
    });
    try {
      const payload = { mobileMoneyAmount: 650, enabledRails: ['MOBILE_MONEY'] };
      await slowApp.listen({ host: '127.0.0.1', port: 0 });
      const first = httpCall(`http://127.0.0.1:${(slowApp.server.address() as { port: number }).port}`, {
        method: 'POST', url: '/v1/payment-links', payload, headers: { 'x-api-key': store.keys.test.secretKey, 'idempotency-key': 'slow-1' },
      });
      await sleep((leaseSeconds + 1.5) * 1000);
      const meanwhile = await createLink(store, 'slow-1', payload);
      expect([meanwhile.status, meanwhile.body.error.code]).toEqual([409, 'idempotency_request_in_progress']);
      expect(Number(meanwhile.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      release();
      const answered = await first;
      expect(answered.status).toBe(201);
      const replay = await createLink(store, 'slow-1', payload);
      expect([replay.status, replay.headers['idempotent-replayed'], replay.body]).toEqual([201, 'true', answered.body]);
      expect(await linkRows(store)).toHaveLength(1);
    } finally {
      release();
      await slowApp.close();
    }
  }, 30_000);
});
