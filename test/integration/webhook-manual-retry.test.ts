import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import type { Stack } from '../helpers/stack.js';
import { eventually, startWebhookStack, stopWebhookStack, webhookHarness } from '../helpers/webhook-harness.js';
import type { TestDnsServer } from '../helpers/webhook-dns.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

let stack: Stack;
let receiver: WebhookReceiver;
let dns: TestDnsServer;
beforeAll(async () => {
  ({ stack, receiver, dns } = await startWebhookStack());
});
afterAll(() => stopWebhookStack({ stack, receiver, dns }));

const { endpoint, emit, deliveries, getEndpoint, finished } = webhookHarness(() => ({ stack, receiver }));

describe('endpoint changes during retries', () => {
  it('stops retrying once the endpoint is deleted', async () => {
    const store = await stack.createStore();
    receiver.on('/deleted', () => ({ status: 500 }));
    const ep = await endpoint(store, '/deleted');
    // At a fifth of the real schedule, the second attempt is a second away.
    const { event } = await emit(store, { scale: 0.2 });
    await receiver.waitFor(() => receiver.requestsTo('/deleted').length === 1, 'the first attempt');
    expect((await stack.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${ep.id}`, key: store.keys.test.secretKey })).status).toBe(200);
    // The dispatch made the first attempt; the workflow's own first step (settling it from the log)
    // may run before or after the deletion, so it counts 1 or 2 steps: either way nothing more is sent.
    expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'endpoint_unavailable' });
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
    expect(d!.error).toContain("resolves to 127.0.0.1, a loopback address; live webhooks only go to public addresses");
    expect(receiver.connections).toBe(connectionsBefore);
  });

  it('dispatches an event whose dispatch never ran, a minute later (outbox sweeper)', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/swept');
    const { event } = await emit(store, { dispatch: false });
    // Recorded two minutes ago (the sweep goes by when the row was written), by an endpoint that existed then.
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET created_at = now() - interval '10 minutes' WHERE id = ${ep.id}`);
    await stack.pool.query(sql.unsafe`UPDATE events SET recorded_at = now() - interval '2 minutes' WHERE id = ${event.id}`);
    await receiver.waitFor(() => receiver.requestsTo('/swept').length === 1, 'the swept event');
    expect(receiver.requestsTo('/swept')[0]!.headers['webhook-id']).toBe(event.id);
    await eventually(
      () => stack.pool.oneFirst(sql.type(z.object({ d: z.string().nullable() }))`SELECT dispatched_at AS d FROM events WHERE id = ${event.id}`),
      (d) => d !== null,
      'dispatched_at',
    );
  });
});
