import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { encryptionEnv, eventually, loopbackWebhooks, webhookHarness } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

/** POST /v1/webhook-endpoints/:id/test: a signed test event to one endpoint, through the real delivery path. */
const retryScale = '0.00002';

let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  stack = await startStack({ WEBHOOK_RETRY_SCALE: retryScale, ...loopbackWebhooks, ...encryptionEnv() });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
});

const { endpoint, deliveries, finished, getEndpoint } = webhookHarness(() => ({ stack, receiver }));
const sendTest = (key: string, id: string, headers: Record<string, string> = {}) =>
  stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test`, key, headers });

describe('sending a test event', () => {
  it('delivers a signed webhook_endpoint.tested event to that endpoint only, logged with its response', async () => {
    const store = await stack.createStore();
    const other = await stack.createStore();
    const ep = await endpoint(store, '/test-me');
    await endpoint(store, '/sibling');
    await endpoint(other, '/other-store');
    const res = await sendTest(store.keys.test.secretKey, ep.id);
    expect(res.status).toBe(202);
    const { event, firstAttempt } = res.body;
    expect(event).toMatchObject({ type: 'webhook_endpoint.tested', environment: 'test', data: { endpointId: ep.id, url: ep.url } });
    expect(firstAttempt).toMatchObject({ eventId: event.id, eventType: 'webhook_endpoint.tested', attempt: 1, status: 'succeeded', responseStatus: 200 });
    const [received] = receiver.requestsTo('/test-me');
    expect(received!.headers['webhook-id']).toBe(event.id);
    // Verified with the endpoint's secret as a merchant would (standardwebhooks).
    expect(verifyWebhook(ep.secret, received!)).toEqual(event);
    expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'delivered', attempts: 1 });
    expect((await deliveries(store, ep.id)).map((d) => [d.eventId, d.status])).toEqual([[event.id, 'succeeded']]);
    // Never fanned out: already dispatched in the outbox, so the sweeper passes it by.
    const dispatched = await stack.pool.oneFirst(sql.type(z.object({ d: z.boolean() }))`SELECT dispatched_at IS NOT NULL AS d FROM events WHERE id = ${event.id}`);
    expect(dispatched).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.requestsTo('/sibling')).toHaveLength(0);
    expect(receiver.requestsTo('/other-store')).toHaveLength(0);
  });

  it('is retried on the schedule like any event until the endpoint answers 2xx', async () => {
    const store = await stack.createStore();
    receiver.on('/flaky-test', (_r, nth) => (nth === 1 ? { status: 503, body: 'starting up' } : { status: 200 }));
    const ep = await endpoint(store, '/flaky-test');
    const res = await sendTest(store.keys.test.secretKey, ep.id);
    expect(res.body.firstAttempt).toMatchObject({ attempt: 1, status: 'failed', responseStatus: 503, error: 'HTTP 503' });
    expect(await finished(res.body.event.id, ep.id)).toMatchObject({ outcome: 'delivered', attempts: 2 });
    const log = await deliveries(store, ep.id);
    expect(log.map((d) => [d.attempt, d.status])).toEqual([[2, 'succeeded'], [1, 'failed']]);
    expect(new Set(receiver.requestsTo('/flaky-test').map((r) => r.headers['webhook-id']))).toEqual(new Set([res.body.event.id]));
  });

  it('sends one event per Idempotency-Key, and a new one per request without it', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/idem-test');
    const headers = { 'idempotency-key': 'test-event-1' };
    const first = await sendTest(store.keys.test.secretKey, ep.id, headers);
    const again = await sendTest(store.keys.test.secretKey, ep.id, headers);
    expect(again.status).toBe(202);
    expect(again.body.event.id).toBe(first.body.event.id);
    const fresh = await sendTest(store.keys.test.secretKey, ep.id);
    expect(fresh.body.event.id).not.toBe(first.body.event.id);
    await eventually(async () => receiver.requestsTo('/idem-test').length, (n) => n >= 2, 'both events');
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requestsTo('/idem-test').map((r) => r.headers['webhook-id']).sort()).toEqual([first.body.event.id, fresh.body.event.id].sort());
  });

  it("answers 404 for another store's endpoint or a malformed id, 409 for a disabled one, and changes nothing", async () => {
    const store = await stack.createStore();
    const other = await stack.createStore();
    const theirs = await endpoint(other, '/theirs-test');
    const count = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM events WHERE store_id = ${store.clientId}`);
    expect((await sendTest(store.keys.test.secretKey, theirs.id)).status).toBe(404);
    expect((await sendTest(store.keys.test.secretKey, 'we_nope')).status).toBe(404);
    expect((await sendTest(store.keys.live.secretKey, theirs.id)).status).toBe(404);
    receiver.on('/gone-test', () => ({ status: 410 }));
    const ep = await endpoint(store, '/gone-test');
    await sendTest(store.keys.test.secretKey, ep.id);
    // The 410 disables it once the attempt is made: inline when the machine is quick, else moments after the 202.
    await eventually(async () => (await getEndpoint(store, ep.id)).status, (s) => s === 'disabled', 'the endpoint disabled by its 410');
    const before = await count();
    const refused = await sendTest(store.keys.test.secretKey, ep.id);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('disabled');
    expect(await count()).toBe(before);
    expect(receiver.requestsTo('/theirs-test')).toHaveLength(0);
  });

  it('needs a secret key', async () => {
    await expectSecretKeyRequired(stack, { method: 'POST', url: `/v1/webhook-endpoints/we_${'0'.repeat(24)}/test` });
  });
});
