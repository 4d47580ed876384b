import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import type { CreatedStore } from '../../db/store-repo.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { rateServiceFor } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { countUndispatchedEvents, countUnstartedLinks, createMetricsRegistry, serveMetrics, type MetricsRegistry } from '../../runtime/metrics.js';
import { claimEvent, insertEvent, undispatchedBacklog } from '../../db/event-repo.js';
import { unstartedBacklog } from '../../db/payment-link-repo.js';
import { handoffFor } from '../../services/payment-links/start-handoff.js';
import { sql } from 'slonik';
import { connectAllRails, evmXpub, tronXpub } from '../helpers/fixtures.js';
import { httpCall } from '../helpers/http.js';
import { labelValues, offendingLabels, valueOf } from '../helpers/metrics.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

const token = 'metrics-token-0123456789abcdef';
let stack: Stack;
let registry: MetricsRegistry;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  registry = createMetricsRegistry();
  stack = await startStack({ METRICS_TOKEN: token, USDT_CONTRACT_USDT_POLYGON_TEST: '0x000000000000000000000000000000000000dEaD' }, { metrics: registry });
  store = await stack.createStore('Metrics');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
  // As runtime/services.ts wires it in every process with a pool.
  countUnstartedLinks(registry, () => unstartedBacklog(stack.pool, 60));
  countUndispatchedEvents(registry, () => undispatchedBacklog(stack.pool, 60));
});
afterAll(async () => stack?.stop());

const scrape = async () => {
  const res = await stack.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return res.text;
};

describe('GET /metrics on the API', () => {
  it('asks for the bearer token: none or a wrong one is a 401, and the token is not echoed', async () => {
    const none = await stack.request({ method: 'GET', url: '/metrics' });
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ code: 'missing_api_key' });
    const wrong = await stack.request({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatchObject({ code: 'invalid_api_key' });
    const apiKey = await stack.request({ method: 'GET', url: '/metrics', key });
    expect(apiKey.status).toBe(401);
    expect(`${none.text}${wrong.text}`).not.toContain(token);
  });

  it('is a 404 when METRICS_TOKEN is unset, even with a bearer token', async () => {
    const config = { ...stack.config, metricsToken: undefined };
    const app = await buildApp({ config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates: rateServiceFor(config, stack.pool), metrics: registry.metrics, metricsText: registry.render });
    try {
      const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toMatchObject({ code: 'not_found' });
    } finally {
      await app.close();
    }
  });

  it('counts a link created, read, paid and confirmed, and one cancelled, with bounded labels only', async () => {
    const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '5', enabledRails: ['USDT_POLYGON'] } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect((await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).status).toBe(200);
    await stack.workflowStarted(id);
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${id}/simulate-payment`, key, payload: { rail: 'USDT_POLYGON' } });
    expect(paid.body).toMatchObject({ status: 'CONFIRMED' });

    const other = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '6', enabledRails: ['USDT_POLYGON'] } });
    await stack.workflowStarted(other.body.id);
    expect((await stack.request({ method: 'POST', url: `/v1/payment-links/${other.body.id}/cancel`, key })).status).toBe(200);

    // Polled in process (GET /metrics has a rate limit of its own), then scraped once.
    await eventually(async () => {
      const t = (await registry.render()).body;
      return valueOf(t, 'malipo_payment_links_total', { event: 'cancelled', rail: 'USDT_POLYGON', environment: 'test' }) >= 1 ? t : undefined;
    }, 'the cancellation to be counted');
    const text = await scrape();
    expect(valueOf(text, 'malipo_payment_links_total', { event: 'created', rail: 'USDT_POLYGON', environment: 'test' })).toBe(2);
    expect(valueOf(text, 'malipo_payment_links_total', { event: 'confirmed', rail: 'USDT_POLYGON', environment: 'test' })).toBe(1);
    expect(valueOf(text, 'malipo_link_confirmation_seconds_count', { rail: 'USDT_POLYGON' })).toBe(1);
    expect(valueOf(text, 'malipo_link_evidence_to_confirmation_seconds_count', { rail: 'USDT_POLYGON' })).toBe(1);
    // HTTP answers by the route's pattern, never the raw path.
    expect(valueOf(text, 'malipo_http_requests_total', { method: 'GET', route: '/v1/payment-links/:id', status: '200' })).toBe(1);
    expect(valueOf(text, 'malipo_http_requests_total', { method: 'POST', route: '/v1/payment-links', status: '201' })).toBe(2);
    expect(valueOf(text, 'malipo_http_request_duration_seconds_count', { method: 'GET', route: '/v1/payment-links/:id', status_class: '2xx' })).toBe(1);
    expect(valueOf(text, 'malipo_process_cpu_seconds_total', {})).toBeGreaterThan(0);

    // No label is an id, a key, a phone number or an address.
    const values = labelValues(text);
    expect(values.length).toBeGreaterThan(10);
    expect(offendingLabels(values, [id, key])).toEqual([]);
  });

  it('counts an Idempotency-Key reused for another request by its code', async () => {
    const headers = { 'idempotency-key': 'metrics-idem-1' };
    expect((await stack.request({ method: 'POST', url: '/v1/payment-links', key, headers, payload: { usdtAmount: '7', enabledRails: ['USDT_POLYGON'] } })).status).toBe(201);
    const reused = await stack.request({ method: 'POST', url: '/v1/payment-links', key, headers, payload: { usdtAmount: '8', enabledRails: ['USDT_POLYGON'] } });
    expect(reused.status).toBe(409);
    const text = await scrape();
    expect(valueOf(text, 'malipo_idempotency_conflicts_total', { code: 'idempotency_key_reused' })).toBe(1);
    expect(valueOf(text, 'malipo_http_requests_total', { method: 'POST', route: '/v1/payment-links', status: '409' })).toBe(1);
  });

  it('counts a request that matches no route under one label, not its path', async () => {
    await stack.request({ method: 'GET', url: '/v1/no-such-thing/pl_123' });
    const text = await scrape();
    expect(valueOf(text, 'malipo_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('no-such-thing');
  });
});

describe('the links whose workflow has not started', () => {
  it('are read from the database at scrape time, older than a minute only', async () => {
    const gauges = async () => {
      const text = (await registry.render()).body;
      return { count: valueOf(text, 'malipo_link_workflows_unstarted', {}), oldest: valueOf(text, 'malipo_link_workflows_unstarted_oldest_seconds', {}) };
    };
    let id = '';
    // The workers (and their starter of unstarted links) are down while the link is made.
    await stack.restartWorkers(async () => {
      // One refused start pauses the API's hand-off for a second: the next link is left unstarted.
      let asked!: () => void;
      const refused = new Promise<void>((resolve) => (asked = resolve));
      handoffFor({ pool: stack.pool }).offer('pl_refused', async () => (asked(), false));
      await refused;
      await new Promise((resolve) => setImmediate(resolve));
      const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '4', enabledRails: ['USDT_POLYGON'] } });
      expect(res.status).toBe(201);
      id = res.body.id;
      // Younger than a minute: the starter's business, not yet a backlog.
      expect(await gauges()).toEqual({ count: 0, oldest: 0 });
      await stack.pool.query(sql.unsafe`UPDATE payment_links SET created_at = now() - interval '150 seconds' WHERE id = ${id}`);
      const read = await gauges();
      expect(read.count).toBe(1);
      expect(read.oldest).toBeGreaterThanOrEqual(150);
      expect(read.oldest).toBeLessThan(3600);
    });
    // Back up, the workers' starter starts it and the backlog empties.
    await stack.workflowStarted(id);
    expect(await gauges()).toEqual({ count: 0, oldest: 0 });
  });

  it('are read through the partial index of unstarted rows', async () => {
    const plan = await stack.pool.transaction(async (tx) => {
      // The table is tiny here, where a sequential scan costs less: forbid it to see the plan the index gives.
      await tx.query(sql.unsafe`SET LOCAL enable_seqscan = off`);
      return tx.anyFirst(sql.unsafe`EXPLAIN SELECT count(*)::int AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest
        FROM payment_links WHERE NOT workflow_started AND created_at < now() - 60 * interval '1 second'`);
    });
    expect(plan.join('\n')).toContain('payment_links_unstarted_idx');
  });
});

describe('the webhook events not dispatched yet', () => {
  it('are read from the database at scrape time, older than a minute only, and empty once the relay sends them', async () => {
    const gauges = async () => {
      const text = (await registry.render()).body;
      return { count: valueOf(text, 'malipo_webhook_outbox_undispatched', {}), oldest: valueOf(text, 'malipo_webhook_outbox_undispatched_oldest_seconds', {}) };
    };
    expect(await gauges()).toEqual({ count: 0, oldest: 0 });
    // An event whose dispatcher claimed it and died: the relay leaves it alone while the claim holds.
    const event = await stack.pool.transaction(async (tx) => {
      const e = await insertEvent(tx, { storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: `metrics:${Math.random()}`, data: { n: 1 }, createdAt: new Date().toISOString() });
      expect((await claimEvent(tx, e.id, 3600)).status).toBe('claimed');
      return e;
    });
    expect(await gauges()).toEqual({ count: 0, oldest: 0 });
    await stack.pool.query(sql.unsafe`UPDATE events SET recorded_at = now() - interval '150 seconds' WHERE id = ${event.id}`);
    const read = await gauges();
    expect(read.count).toBe(1);
    expect(read.oldest).toBeGreaterThanOrEqual(150);
    expect(read.oldest).toBeLessThan(3600);
    // The claim lapses: the relay (or the sweeper) dispatches it, and the backlog empties.
    await stack.pool.query(sql.unsafe`UPDATE events SET dispatch_claimed_until = now() - interval '1 second' WHERE id = ${event.id}`);
    await eventually(async () => ((await gauges()).count === 0 ? true : undefined), 'the event dispatched');
    expect(await gauges()).toEqual({ count: 0, oldest: 0 });
  });
});

describe("a worker's metrics port", () => {
  let server: Server;
  beforeAll(async () => {
    server = await serveMetrics(registry, '127.0.0.1', 0);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('serves the same registry on GET /metrics and nothing else', async () => {
    const address = server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const res = await httpCall(base, { method: 'GET', url: '/metrics' });
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toContain('text/plain');
    expect(res.text).toContain('malipo_payment_links_total');
    expect((await httpCall(base, { method: 'GET', url: '/' })).status).toBe(404);
  });
});
