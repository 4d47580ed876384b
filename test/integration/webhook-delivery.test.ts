import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowNotFoundError } from '@temporalio/client';
import { sql } from 'slonik';
import { firstDeliveryId } from '../../services/webhooks/attempts.js';
import { createWebhookActivities } from '../../activities/webhooks/index.js';
import { openPool } from '../../db/pool.js';
import { StatementCounter } from '../helpers/pg-statement-counter.js';
import { z } from 'zod';
import type { Stack } from '../helpers/stack.js';
import { eventually, linkData, startWebhookStack, stopWebhookStack, webhookHarness } from '../helpers/webhook-harness.js';
import type { TestDnsServer } from '../helpers/webhook-dns.js';
import { verifyWebhook, WebhookReceiver, type Received } from '../helpers/webhook-receiver.js';

let stack: Stack;
let receiver: WebhookReceiver;
let dns: TestDnsServer;
beforeAll(async () => {
  ({ stack, receiver, dns } = await startWebhookStack());
});
afterAll(() => stopWebhookStack({ stack, receiver, dns }));

const { endpoint, emit, deliveries, getEndpoint, finished } = webhookHarness(() => ({ stack, receiver }));

describe('delivery', () => {
  it('POSTs the event with Standard Webhooks headers that the standardwebhooks library verifies, once', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/signed');
    const { event, dispatched, activities } = await emit(store);
    // The first attempt is made by the dispatch itself: it succeeded, so no delivery workflow was needed.
    expect(dispatched).toEqual({ endpoints: 1, sent: 1, retrying: 0 });
    await expect(stack.temporal.workflow.getHandle(`webhook-delivery/${event.id}/${ep.id}`).describe()).rejects.toThrow(WorkflowNotFoundError);
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
      id: firstDeliveryId(event.id, ep.id), eventId: event.id, eventType: 'payment_link.confirmed', attempt: 1,
      status: 'succeeded', responseStatus: 200, latencyMs: expect.any(Number), error: null, responseBody: null, createdAt: expect.any(String),
    });
    const dispatchedAt = await stack.pool.oneFirst(sql.type(z.object({ d: z.string().nullable() }))`SELECT dispatched_at AS d FROM events WHERE id = ${event.id}`);
    expect(dispatchedAt).not.toBeNull();
    // Dispatching the same event again (a retried activity) finds the logged attempt: nothing is sent or started.
    expect(await activities.dispatchEvent({ eventId: event.id })).toEqual({ endpoints: 1, sent: 0, retrying: 0 });
    expect(await activities.dispatchEventToWorkflows({ eventId: event.id })).toEqual({ endpoints: 1, sent: 0, retrying: 0 });
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
    expect(dispatched).toEqual({ endpoints: 2, sent: 2, retrying: 0 });
    await receiver.waitFor(() => receiver.requestsTo('/match/all').length + receiver.requestsTo('/match/transfers').length === 2, 'both');
    for (const path of ['/match/links', '/match/disabled', '/match/other-store']) expect(receiver.requestsTo(path)).toEqual([]);
    expect(JSON.parse(receiver.requestsTo('/match/all')[0]!.body).data).toEqual(transfer);
  });

  it('sends an endpoint only events recorded after it was created, however late the dispatch runs', async () => {
    // A worker roll can hold an event's dispatch back until the outbox sweep a minute later; an
    // endpoint the merchant adds meanwhile must not receive what happened before it existed.
    const store = await stack.createStore();
    const before = await endpoint(store, '/late-dispatch/before');
    const { event, activities } = await emit(store, { dispatch: false });
    await endpoint(store, '/late-dispatch/after');
    expect(await activities.dispatchEvent({ eventId: event.id })).toEqual({ endpoints: 1, sent: 1, retrying: 0 });
    await receiver.waitFor(() => receiver.requestsTo('/late-dispatch/before').length === 1, 'the delivery to the older endpoint');
    expect(verifyWebhook(before.secret, receiver.requestsTo('/late-dispatch/before')[0]!)).toMatchObject({ id: event.id });
    // The next event is the new endpoint's to receive.
    const next = await emit(store);
    expect(next.dispatched).toEqual({ endpoints: 2, sent: 2, retrying: 0 });
    await receiver.waitFor(() => receiver.requestsTo('/late-dispatch/after').length === 1, 'the delivery to the newer endpoint');
    expect(JSON.parse(receiver.requestsTo('/late-dispatch/after')[0]!.body).id).toBe(next.event.id);
  });

  it('fans one event out to many endpoints, each signed with its own secret', async () => {
    const store = await stack.createStore();
    const eps: { id: string; secret: string }[] = [];
    for (let i = 0; i < 25; i++) eps.push(await endpoint(store, `/many/${i}`));
    const { event, dispatched } = await emit(store);
    expect(dispatched).toEqual({ endpoints: 25, sent: 25, retrying: 0 });
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

describe('the first attempt, made by the dispatch', () => {
  it('hands a failed first attempt to the delivery workflow, which goes on from attempt 2 without sending it again', async () => {
    const store = await stack.createStore();
    receiver.on('/handover', (_req, nth) => (nth === 1 ? { status: 503 } : { status: 200 }));
    const ep = await endpoint(store, '/handover');
    const { event, dispatched, activities } = await emit(store);
    expect(dispatched).toEqual({ endpoints: 1, sent: 1, retrying: 1 });
    // A retried dispatch finds the failed attempt logged and the workflow running: it does nothing.
    expect(await activities.dispatchEvent({ eventId: event.id })).toEqual({ endpoints: 1, sent: 0, retrying: 0 });
    expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'delivered', attempts: 2 });
    const log = await deliveries(store, ep.id);
    expect(log.map((d) => [d.attempt, d.status, d.responseStatus])).toEqual([[2, 'succeeded', 200], [1, 'failed', 503]]);
    expect(log[1]!.id).toBe(firstDeliveryId(event.id, ep.id));
    expect(receiver.requestsTo('/handover').map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
  });

  it('loses nothing when the attempt was sent but its log write failed: the workflow sends it again under the same webhook-id, logged once', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/unlogged');
    const { event, activities } = await emit(store, { dispatch: false });
    // The crash between the POST and its log row, made real: the first log write for this event
    // fails (a sequence counts the writes; its increments survive the failed statement).
    await stack.pool.query(sql.unsafe`CREATE SEQUENCE unlogged_writes`);
    await stack.pool.query(sql.unsafe`
      CREATE FUNCTION fail_first_log() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF nextval('unlogged_writes') = 1 THEN RAISE EXCEPTION 'injected fault: the database went away'; END IF;
        RETURN NEW;
      END $$`);
    await stack.pool.query(sql.unsafe`
      CREATE TRIGGER fail_first_log BEFORE INSERT ON webhook_deliveries FOR EACH ROW
      WHEN (NEW.event_id = ${sql.literalValue(event.id)}) EXECUTE FUNCTION fail_first_log()`);
    try {
      expect(await activities.dispatchEvent({ eventId: event.id })).toEqual({ endpoints: 1, sent: 0, retrying: 1 });
      expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'delivered', attempts: 1 });
    } finally {
      await stack.pool.query(sql.unsafe`DROP TRIGGER fail_first_log ON webhook_deliveries`);
      await stack.pool.query(sql.unsafe`DROP FUNCTION fail_first_log()`);
      await stack.pool.query(sql.unsafe`DROP SEQUENCE unlogged_writes`);
    }
    const got = receiver.requestsTo('/unlogged');
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
    expect((await deliveries(store, ep.id)).map((d) => [d.id, d.attempt, d.status])).toEqual([[firstDeliveryId(event.id, ep.id), 1, 'succeeded']]);
  });

  it('logs a fan-out\'s first attempts in one statement: five statements for an event to three endpoints, one row each', async () => {
    const store = await stack.createStore();
    const eps = [await endpoint(store, '/batch/0'), await endpoint(store, '/batch/1'), await endpoint(store, '/batch/2')];
    const { event } = await emit(store, { dispatch: false });
    const counter = await StatementCounter.start();
    const pool = await openPool(counter.urlFor(stack.config.databaseUrl!), 4, { preparedStatements: true });
    try {
      const activities = createWebhookActivities({ pool, temporal: stack.temporal, config: stack.config });
      const statements = (await counter.during(() => activities.dispatchEvent({ eventId: event.id }).then((r) => expect(r).toEqual({ endpoints: 3, sent: 3, retrying: 0 }))))
        .filter((q) => /\b(events|webhook_endpoints|webhook_deliveries)\b/.test(q));
      // The event, its endpoints, the first attempts already logged, one INSERT for the three, the dispatch mark.
      expect(statements.filter((q) => /INSERT INTO webhook_deliveries/.test(q))).toHaveLength(1);
      expect(statements).toHaveLength(5);
    } finally {
      await pool.end();
      await counter.close();
    }
    for (const ep of eps) {
      expect((await deliveries(store, ep.id)).map((d) => [d.id, d.attempt, d.status])).toEqual([[firstDeliveryId(event.id, ep.id), 1, 'succeeded']]);
    }
    expect(eps.map((_, i) => receiver.requestsTo(`/batch/${i}`).length)).toEqual([1, 1, 1]);
  });

  it('leaves every first attempt to the delivery workflows for callers that must not wait on endpoints (chain scan, outbox sweep)', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/via-workflow');
    const { event, activities } = await emit(store, { dispatch: false });
    expect(await activities.dispatchEventToWorkflows({ eventId: event.id })).toEqual({ endpoints: 1, sent: 0, retrying: 1 });
    expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'delivered', attempts: 1 });
    expect((await deliveries(store, ep.id)).map((d) => d.id)).toEqual([firstDeliveryId(event.id, ep.id)]);
    // The dispatch run afterwards finds that attempt logged and sends nothing more.
    expect(await activities.dispatchEvent({ eventId: event.id })).toEqual({ endpoints: 1, sent: 0, retrying: 0 });
    expect(receiver.requestsTo('/via-workflow')).toHaveLength(1);
  });
});

describe('the outbox sweep', () => {
  const dispatchedAt = (eventId: string) =>
    stack.pool.oneFirst(sql.type(z.object({ d: z.string().nullable() }))`SELECT dispatched_at AS d FROM events WHERE id = ${eventId}`);

  it('leaves an event to its own dispatch for a minute after it was recorded, however old its business time', async () => {
    // A confirmation can carry a time hours back (an M-Pesa TransactionDate, a deposit's block
    // time) while its dispatch is still running: by business time it would look a minute late at once.
    const store = await stack.createStore();
    const ep = await endpoint(store, '/swept');
    // The endpoint existed long before the event, so the event is its to receive however it is dispatched.
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET created_at = now() - interval '10 minutes' WHERE id = ${ep.id}`);
    const { event, activities } = await emit(store, { createdAt: new Date(Date.now() - 3 * 3600_000).toISOString(), dispatch: false });
    await activities.sweepOutbox();
    expect(await dispatchedAt(event.id)).toBeNull();
    expect(receiver.requestsTo('/swept')).toEqual([]);
    // Recorded over a minute ago and still not dispatched: now the dispatch has been lost, and the sweep takes it.
    await stack.pool.query(sql.unsafe`UPDATE events SET recorded_at = now() - interval '2 minutes' WHERE id = ${event.id}`);
    await activities.sweepOutbox();
    expect(await dispatchedAt(event.id)).not.toBeNull();
    expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'delivered', attempts: 1 });
    expect(receiver.requestsTo('/swept').map((r) => r.headers['webhook-id'])).toEqual([event.id]);
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

  it('retries 500s, logging each status (never the body: the receiver is on loopback)', async () => {
    const store = await stack.createStore();
    receiver.on('/flaky', (_req, nth) => (nth <= 2 ? { status: 500, body: `boom ${nth} ${'x'.repeat(5000)}` } : { status: 204 }));
    const ep = await endpoint(store, '/flaky');
    const { event } = await emit(store);
    const log = await eventually(() => deliveries(store, ep.id), (d) => d[0]?.status === 'succeeded', 'the success');
    expect(log.map((d) => [d.attempt, d.status, d.responseStatus])).toEqual([[3, 'succeeded', 204], [2, 'failed', 500], [1, 'failed', 500]]);
    expect(log[1]!.error).toBe('HTTP 500');
    expect(log.map((d) => d.responseBody)).toEqual([null, null, null]);
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
    expect(log[2]!.error).toBe('HTTP 302 redirect not followed; set the endpoint URL to the final address');
    expect(receiver.requestsTo('/target')).toEqual([]);
  });

  it('disables an endpoint that answers 410 Gone, visibly, and sends it nothing more', async () => {
    const store = await stack.createStore();
    receiver.on('/gone', () => ({ status: 410, body: 'gone' }));
    const ep = await endpoint(store, '/gone');
    // The dispatch's own first attempt meets the 410: the endpoint is disabled, no workflow is needed.
    const { dispatched } = await emit(store);
    expect(dispatched).toEqual({ endpoints: 1, sent: 1, retrying: 0 });
    const shown = await eventually(() => getEndpoint(store, ep.id), (e) => e.status === 'disabled', 'the endpoint disabled');
    expect(shown.disabledReason).toContain('410 Gone');
    expect(shown.disabledAt).toEqual(expect.any(String));
    expect((await deliveries(store, ep.id)).map((d) => [d.status, d.responseStatus])).toEqual([['failed', 410]]);
    expect((await emit(store)).dispatched).toEqual({ endpoints: 0, sent: 0, retrying: 0 });
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
