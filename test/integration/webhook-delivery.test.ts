import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { createWebhookActivities } from '../../activities/webhooks/index.js';
import { insertEvent, type EventType } from '../../db/event-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import type { Environment } from '../../domain/environment.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { TestDnsServer } from '../helpers/webhook-dns.js';
import { verifyWebhook, WebhookReceiver, type Received } from '../helpers/webhook-receiver.js';

// The whole Standard Webhooks schedule (about three days) shrunk to about five seconds.
const retryScale = '0.00002';

let stack: Stack;
let receiver: WebhookReceiver;
let dns: TestDnsServer;
beforeAll(async () => {
  dns = await TestDnsServer.start();
  stack = await startStack({ WEBHOOK_RETRY_SCALE: retryScale, WEBHOOK_DNS_SERVERS: dns.server });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
  await dns?.close();
});

const linkData = (ref: string) => ({
  id: 'pl_0123456789abcdefghijklmn',
  status: 'CONFIRMED',
  environment: 'test',
  usdtAmount: '10.5',
  merchantRef: ref,
  metadata: { orderId: 42, customer: { name: 'Wanjiků', tags: ['vip', null] }, note: 'a "quoted" value' },
  confirmedRail: 'MOBILE_MONEY',
  externalId: 'SGR7H2K9LQ',
});

async function endpoint(store: CreatedStore, path: string, extra: Record<string, unknown> = {}, env: Environment = 'test') {
  const res = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys[env].secretKey, payload: { url: receiver.url(path), ...extra } });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string; url: string };
}

async function emit(store: CreatedStore, opts: { type?: EventType; env?: Environment; data?: unknown; createdAt?: string; dispatch?: boolean; scale?: number } = {}) {
  const env = opts.env ?? 'test';
  const event = await insertEvent(stack.pool, {
    storeId: store.clientId,
    environment: env,
    type: opts.type ?? 'payment_link.confirmed',
    dedupeKey: `test:${Math.random()}`,
    data: opts.data ?? linkData('order-1'),
    createdAt: opts.createdAt ?? new Date().toISOString(),
  });
  const config = opts.scale ? { ...stack.config, webhooks: { ...stack.config.webhooks, retryScale: opts.scale } } : stack.config;
  const activities = createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config });
  const dispatched = opts.dispatch === false ? undefined : await activities.dispatchEvent({ eventId: event.id });
  return { event, dispatched, activities };
}

async function deliveries(store: CreatedStore, endpointId: string, env: Environment = 'test') {
  const res = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpointId}/deliveries`, key: store.keys[env].secretKey });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; eventId: string; attempt: number; status: string; responseStatus: number | null; error: string | null; latencyMs: number; responseBody: string | null }[];
}

async function getEndpoint(store: CreatedStore, id: string, env: Environment = 'test') {
  return (await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${id}`, key: store.keys[env].secretKey })).body;
}

/** Waits for the delivery workflow of the pair to finish and, with RECORD_HISTORIES=1, keeps its history for replay. */
async function finished(eventId: string, endpointId: string, historyName?: string, suffix = '') {
  const handle = stack.temporal.workflow.getHandle(`webhook-delivery/${eventId}/${endpointId}${suffix}`);
  const result = await handle.result();
  if (historyName) await maybeRecordHistory(handle, historyName);
  return result;
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('delivery', () => {
  it('POSTs the event with Standard Webhooks headers that the standardwebhooks library verifies, once', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/signed');
    const { event, dispatched, activities } = await emit(store);
    expect(dispatched).toEqual({ endpoints: 1, started: 1 });
    await receiver.waitFor(() => receiver.requestsTo('/signed').length === 1, 'the webhook');
    const [req] = receiver.requestsTo('/signed') as [Received];
    expect(verifyWebhook(ep.secret, req)).toEqual({
      id: event.id, type: 'payment_link.confirmed', createdAt: event.createdAt, environment: 'test', data: linkData('order-1'),
    });
    expect(req.headers['webhook-id']).toBe(event.id);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const log = await eventually(() => deliveries(store, ep.id), (d) => d.length === 1, 'the delivery log');
    expect(log[0]).toEqual({
      id: expect.stringMatching(/^wd_[0-9a-z]{24}$/), eventId: event.id, eventType: 'payment_link.confirmed', attempt: 1,
      status: 'succeeded', responseStatus: 200, latencyMs: expect.any(Number), error: null, responseBody: 'ok', createdAt: expect.any(String),
    });
    const dispatchedAt = await stack.pool.oneFirst(sql.type(z.object({ d: z.string().nullable() }))`SELECT dispatched_at AS d FROM events WHERE id = ${event.id}`);
    expect(dispatchedAt).not.toBeNull();
    // Dispatching the same event again starts nothing new.
    expect(await activities.dispatchEvent({ eventId: event.id })).toEqual({ endpoints: 1, started: 0 });
    expect(await activities.sweepOutbox()).toEqual({ dispatched: 0 });
    expect(receiver.requestsTo('/signed')).toHaveLength(1);
  });

  it('sends only to enabled endpoints of the same store and environment subscribed to the type', async () => {
    const [store, other] = [await stack.createStore(), await stack.createStore()];
    await endpoint(store, '/match/all');
    await endpoint(store, '/match/transfers', { enabledEvents: ['transfer.confirmed'] });
    await endpoint(store, '/match/links', { enabledEvents: ['payment_link.confirmed'] });
    const disabled = await endpoint(store, '/match/disabled');
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'test' WHERE id = ${disabled.id}`);
    await endpoint(other, '/match/other-store');
    const transfer = { network: 'BSC', index: 3, address: '0xabc', txHash: '0x01', logIndex: 0, from: '0xdef', amount: '25', confirmations: 1, blockNumber: 12 };
    const { dispatched } = await emit(store, { type: 'transfer.confirmed', data: transfer });
    expect(dispatched).toEqual({ endpoints: 2, started: 2 });
    await receiver.waitFor(() => receiver.requestsTo('/match/all').length + receiver.requestsTo('/match/transfers').length === 2, 'both');
    for (const path of ['/match/links', '/match/disabled', '/match/other-store']) expect(receiver.requestsTo(path)).toEqual([]);
    expect(JSON.parse(receiver.requestsTo('/match/all')[0]!.body).data).toEqual(transfer);
  });

  it('fans one event out to many endpoints, each signed with its own secret', async () => {
    const store = await stack.createStore();
    const eps: { id: string; secret: string }[] = [];
    for (let i = 0; i < 25; i++) eps.push(await endpoint(store, `/many/${i}`));
    const { event, dispatched } = await emit(store);
    expect(dispatched).toEqual({ endpoints: 25, started: 25 });
    await receiver.waitFor(() => eps.every((_, i) => receiver.requestsTo(`/many/${i}`).length > 0), 'all 25 endpoints');
    eps.forEach((ep, i) => {
      const got = receiver.requestsTo(`/many/${i}`);
      expect(got).toHaveLength(1);
      expect((verifyWebhook(ep.secret, got[0]!) as { id: string }).id).toBe(event.id);
      expect(() => verifyWebhook(eps[(i + 1) % eps.length]!.secret, got[0]!)).toThrow('No matching signature');
    });
  });

  it('signs with both secrets after a roll, so either verifies', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/rolled');
    const rolled = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/roll-secret`, key: store.keys.test.secretKey });
    await emit(store);
    await receiver.waitFor(() => receiver.requestsTo('/rolled').length === 1, 'the webhook');
    const req = receiver.requestsTo('/rolled')[0]!;
    expect(String(req.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(rolled.body.secret, req)).toBeTruthy();
    expect(verifyWebhook(ep.secret, req)).toBeTruthy();
  });
});

describe('retries', () => {
  it('keeps trying while the receiver is down and delivers once it is back, with the same webhook-id', async () => {
    const store = await stack.createStore();
    const spare = await WebhookReceiver.start();
    const ep = (await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey, payload: { url: spare.url('/down') } })).body;
    await spare.down();
    const { event } = await emit(store);
    const failed = await eventually(() => deliveries(store, ep.id), (d) => d.length >= 2, 'two failed attempts');
    expect(failed.every((d) => d.status === 'failed' && d.error === 'connection refused' && d.responseStatus === null)).toBe(true);
    await spare.up();
    await spare.waitFor(() => spare.received.length === 1, 'the delivery after coming back');
    const log = await eventually(() => deliveries(store, ep.id), (d) => d[0]?.status === 'succeeded', 'the success in the log');
    expect(log.map((d) => d.attempt)).toEqual(log.map((_, i) => log.length - i));
    expect(spare.received[0]!.headers['webhook-id']).toBe(event.id);
    expect(verifyWebhook(ep.secret, spare.received[0]!)).toBeTruthy();
    await spare.down();
  });

  it('retries 500s, logging each status and the start of the response body', async () => {
    const store = await stack.createStore();
    receiver.on('/flaky', (_req, nth) => (nth <= 2 ? { status: 500, body: `boom ${nth} ${'x'.repeat(5000)}` } : { status: 204 }));
    const ep = await endpoint(store, '/flaky');
    const { event } = await emit(store);
    const log = await eventually(() => deliveries(store, ep.id), (d) => d[0]?.status === 'succeeded', 'the success');
    expect(log.map((d) => [d.attempt, d.status, d.responseStatus])).toEqual([[3, 'succeeded', 204], [2, 'failed', 500], [1, 'failed', 500]]);
    expect(log[1]!.error).toBe('HTTP 500');
    expect(log[1]!.responseBody).toMatch(/^boom 2 x+$/);
    expect(log[1]!.responseBody).toHaveLength(1024);
    const got = receiver.requestsTo('/flaky');
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id, event.id]);
    for (const r of got) expect(verifyWebhook(ep.secret, r)).toBeTruthy();
    expect(await finished(event.id, ep.id, 'webhook-delivery-retried')).toMatchObject({ outcome: 'delivered', attempts: 3 });
  });

  it('gives a slow receiver 10 seconds, then retries', async () => {
    const store = await stack.createStore();
    receiver.on('/slow', (_req, nth) => (nth === 1 ? { status: 200, hang: true } : { status: 200 }));
    const ep = await endpoint(store, '/slow');
    await emit(store);
    const log = await eventually(() => deliveries(store, ep.id), (d) => d[0]?.status === 'succeeded', 'the retry', 40_000);
    expect(log).toHaveLength(2);
    expect(log[1]).toMatchObject({ status: 'failed', responseStatus: null, error: 'timed out after 10 s without a complete response' });
    expect(log[1]!.latencyMs).toBeGreaterThanOrEqual(10_000);
  }, 60_000);

  it('does not follow redirects', async () => {
    const store = await stack.createStore();
    receiver.on('/moved', (_req, nth) => (nth <= 2 ? { status: 302, headers: { location: receiver.url('/target') } } : { status: 200 }));
    const ep = await endpoint(store, '/moved');
    await emit(store);
    const log = await eventually(() => deliveries(store, ep.id), (d) => d[0]?.status === 'succeeded', 'the success');
    expect(log[2]).toMatchObject({ status: 'failed', responseStatus: 302 });
    expect(log[2]!.error).toContain(`redirect to ${receiver.url('/target')} not followed`);
    expect(receiver.requestsTo('/target')).toEqual([]);
  });

  it('disables an endpoint that answers 410 Gone, visibly, and sends it nothing more', async () => {
    const store = await stack.createStore();
    receiver.on('/gone', () => ({ status: 410, body: 'gone' }));
    const ep = await endpoint(store, '/gone');
    const { event } = await emit(store);
    expect(await finished(event.id, ep.id, 'webhook-delivery-gone')).toMatchObject({ outcome: 'endpoint_gone', attempts: 1, endpointDisabled: true });
    const shown = await eventually(() => getEndpoint(store, ep.id), (e) => e.status === 'disabled', 'the endpoint disabled');
    expect(shown.disabledReason).toContain('410 Gone');
    expect(shown.disabledAt).toEqual(expect.any(String));
    expect((await deliveries(store, ep.id)).map((d) => [d.status, d.responseStatus])).toEqual([['failed', 410]]);
    expect((await emit(store)).dispatched).toEqual({ endpoints: 0, started: 0 });
    expect(receiver.requestsTo('/gone')).toHaveLength(1);
    const enabled = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/enable`, key: store.keys.test.secretKey });
    expect(enabled.body).toMatchObject({ status: 'enabled', disabledReason: null, disabledAt: null });
  });

  it('disables an endpoint that failed every attempt for the whole schedule, saying why', async () => {
    const store = await stack.createStore();
    receiver.on('/broken', () => ({ status: 503 }));
    const ep = await endpoint(store, '/broken');
    const { event } = await emit(store);
    expect(await finished(event.id, ep.id, 'webhook-delivery-exhausted')).toMatchObject({ outcome: 'exhausted', attempts: 10, endpointDisabled: true });
    const shown = await eventually(() => getEndpoint(store, ep.id), (e) => e.status === 'disabled', 'the endpoint disabled', 45_000);
    expect(shown.disabledReason).toMatch(/^Disabled automatically on .+: no delivery succeeded since .+ \(10 attempts of event evt_\w+; last error: HTTP 503\)/);
    expect(receiver.requestsTo('/broken')).toHaveLength(10);
  }, 60_000);
});

describe('endpoint changes during retries', () => {
  it('stops retrying once the endpoint is deleted', async () => {
    const store = await stack.createStore();
    receiver.on('/deleted', () => ({ status: 500 }));
    const ep = await endpoint(store, '/deleted');
    // At a fifth of the real schedule, the second attempt is a second away.
    const { event } = await emit(store, { scale: 0.2 });
    await receiver.waitFor(() => receiver.requestsTo('/deleted').length === 1, 'the first attempt');
    expect((await stack.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${ep.id}`, key: store.keys.test.secretKey })).status).toBe(200);
    expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'endpoint_unavailable', attempts: 2 });
    expect(receiver.requestsTo('/deleted')).toHaveLength(1);
  });
});

describe('manual retry', () => {
  it('sends a logged delivery again now and answers with the new attempt', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/again');
    const { event } = await emit(store);
    const [first] = await eventually(() => deliveries(store, ep.id), (d) => d.length === 1, 'the first delivery');
    const res = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/deliveries/${first!.id}/retry`, key: store.keys.test.secretKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ eventId: event.id, attempt: 2, status: 'succeeded', responseStatus: 200 });
    expect(res.body.id).not.toBe(first!.id);
    expect(await finished(event.id, ep.id, 'webhook-delivery-manual', `/manual/${res.body.id}`)).toMatchObject({ outcome: 'delivered', attempts: 1 });
    expect(receiver.requestsTo('/again').map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
    const unknown = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/deliveries/wd_${'1'.repeat(24)}/retry`, key: store.keys.test.secretKey });
    expect(unknown.status).toBe(404);
  });

  it('stops the automatic retries once a manual retry got through', async () => {
    const store = await stack.createStore();
    let healthy = false;
    receiver.on('/manual', () => (healthy ? { status: 200 } : { status: 500 }));
    const ep = await endpoint(store, '/manual');
    // At the real schedule the second automatic attempt is 5 seconds away.
    const { event } = await emit(store, { scale: 1 });
    const [failed] = await eventually(() => deliveries(store, ep.id), (d) => d.length === 1, 'the first failure');
    healthy = true;
    const res = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/deliveries/${failed!.id}/retry`, key: store.keys.test.secretKey });
    expect(res.body).toMatchObject({ attempt: 2, status: 'succeeded' });
    expect(await finished(event.id, ep.id, 'webhook-delivery-stopped-by-manual')).toMatchObject({ outcome: 'delivered_manually', attempts: 1 });
    expect(receiver.requestsTo('/manual')).toHaveLength(2);
  });

  it('refuses to retry to a disabled endpoint', async () => {
    const store = await stack.createStore();
    receiver.on('/gone-again', () => ({ status: 410 }));
    const ep = await endpoint(store, '/gone-again');
    await emit(store);
    await eventually(() => getEndpoint(store, ep.id), (e) => e.status === 'disabled', 'disabled');
    const [d] = await deliveries(store, ep.id);
    const res = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/deliveries/${d!.id}/retry`, key: store.keys.test.secretKey });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('disabled');
  });
});

describe('safety nets', () => {
  it('refuses at delivery time a live host whose DNS answer turned private (rebinding), without dialling it', async () => {
    const store = await stack.createStore();
    dns.records.set('hooks.rebind.test', '93.184.216.34');
    const res = await stack.request({
      method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.live.secretKey, payload: { url: `https://hooks.rebind.test:${receiver.port}/live` },
    });
    expect(res.status).toBe(201);
    dns.records.set('hooks.rebind.test', '127.0.0.1');
    const connectionsBefore = receiver.connections;
    await emit(store, { env: 'live' });
    const [d] = await eventually(() => deliveries(store, res.body.id, 'live'), (l) => l.length >= 1, 'the refused attempt');
    expect(d).toMatchObject({ status: 'failed', responseStatus: null });
    expect(d!.error).toContain("resolves to 127.0.0.1, a private, loopback, link-local or reserved address");
    expect(receiver.connections).toBe(connectionsBefore);
  });

  it('dispatches an event whose dispatch never ran, a minute later (outbox sweeper)', async () => {
    const store = await stack.createStore();
    await endpoint(store, '/swept');
    const { event } = await emit(store, { dispatch: false, createdAt: new Date(Date.now() - 120_000).toISOString() });
    await receiver.waitFor(() => receiver.requestsTo('/swept').length === 1, 'the swept event');
    expect(receiver.requestsTo('/swept')[0]!.headers['webhook-id']).toBe(event.id);
    await eventually(
      () => stack.pool.oneFirst(sql.type(z.object({ d: z.string().nullable() }))`SELECT dispatched_at AS d FROM events WHERE id = ${event.id}`),
      (d) => d !== null,
      'dispatched_at',
    );
  });
});
