import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { createWebhookActivities } from '../../activities/webhooks/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { httpCall } from '../helpers/http.js';
import type { Stack } from '../helpers/stack.js';
import { eventually, startWebhookStack, stopWebhookStack, webhookHarness } from '../helpers/webhook-harness.js';
import type { TestDnsServer } from '../helpers/webhook-dns.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * `webhook_endpoint.disabled` and `webhook_delivery.exhausted`: what Malipo tells a store's other
 * endpoints when one of them fails, through the real dispatch, delivery workflows and receivers.
 */
let stack: Stack;
let receiver: WebhookReceiver;
let dns: TestDnsServer;
beforeAll(async () => {
  ({ stack, receiver, dns } = await startWebhookStack());
});
afterAll(() => stopWebhookStack({ stack, receiver, dns }));

const { endpoint, emit, getEndpoint, finished } = webhookHarness(() => ({ stack, receiver }));

/** The signed bodies a path received, verified with the endpoint's secret. */
const verified = (path: string, secret: string) => receiver.requestsTo(path).map((r) => verifyWebhook(secret, r) as { id: string; type: string; data: any });
const ofType = (path: string, secret: string, type: string) => verified(path, secret).filter((b) => b.type === type);
const storedNotices = async (store: CreatedStore, type: string) =>
  stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM events WHERE store_id = ${store.clientId} AND type = ${type}`);

describe('webhook_endpoint.disabled', () => {
  it('goes once, signed, to the other endpoint when one answers 410, never to the one that failed', async () => {
    const store = await stack.createStore();
    receiver.on('/n410/gone', () => ({ status: 410 }));
    const gone = await endpoint(store, '/n410/gone');
    const other = await endpoint(store, '/n410/other');
    const { event, activities } = await emit(store);
    await eventually(async () => ofType('/n410/other', other.secret, 'webhook_endpoint.disabled'), (b) => b.length === 1, 'the notice at the other endpoint');
    const [notice] = ofType('/n410/other', other.secret, 'webhook_endpoint.disabled');
    const shown = await getEndpoint(store, gone.id);
    expect(shown.status).toBe('disabled');
    expect(notice).toMatchObject({ type: 'webhook_endpoint.disabled', environment: 'test' });
    expect(notice!.data).toEqual({
      endpointId: gone.id, url: gone.url, reason: 'gone', description: shown.disabledReason, disabledAt: shown.disabledAt,
      eventId: event.id, eventType: 'payment_link.confirmed', attempts: 1, lastError: 'HTTP 410 Gone: the endpoint is now disabled', firstAttemptAt: expect.any(String),
    });
    // The failed endpoint saw only the event it refused; a retried dispatch (settling the logged 410 again) writes nothing more.
    expect(receiver.requestsTo('/n410/gone')).toHaveLength(1);
    await activities.dispatchEvent({ eventId: event.id });
    await activities.sweepOutbox();
    expect(await storedNotices(store, 'webhook_endpoint.disabled')).toBe(1);
    expect(ofType('/n410/other', other.secret, 'webhook_endpoint.disabled')).toHaveLength(1);
    expect(receiver.requestsTo('/n410/gone')).toHaveLength(1);
  });

  it('is not sent to an endpoint that did not subscribe to it', async () => {
    const store = await stack.createStore();
    receiver.on('/nsub/gone', () => ({ status: 410 }));
    await endpoint(store, '/nsub/gone');
    const links = await endpoint(store, '/nsub/links-only', { enabledEvents: ['payment_link.confirmed'] });
    const all = await endpoint(store, '/nsub/all');
    await emit(store);
    await eventually(async () => ofType('/nsub/all', all.secret, 'webhook_endpoint.disabled'), (b) => b.length === 1, 'the notice');
    expect(verified('/nsub/links-only', links.secret).map((b) => b.type)).toEqual(['payment_link.confirmed']);
  });
});

describe('webhook_delivery.exhausted', () => {
  it('goes once to the other endpoint, with the endpoint disabled after it, and a retried conclusion doubles nothing', async () => {
    const store = await stack.createStore();
    receiver.on('/nex/broken', () => ({ status: 503 }));
    const broken = await endpoint(store, '/nex/broken');
    const other = await endpoint(store, '/nex/other');
    const { event } = await emit(store);
    expect(await finished(event.id, broken.id)).toMatchObject({ outcome: 'exhausted', attempts: 10, endpointDisabled: true });
    await eventually(async () => verified('/nex/other', other.secret).filter((b) => b.type !== 'payment_link.confirmed'), (b) => b.length === 2, 'both notices', 45_000);
    const [exhausted] = ofType('/nex/other', other.secret, 'webhook_delivery.exhausted');
    const lastDeliveryId = (await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${broken.id}/deliveries`, key: store.keys.test.secretKey })).body.data[0].id;
    expect(exhausted!.data).toEqual({
      endpointId: broken.id, url: broken.url, eventId: event.id, eventType: 'payment_link.confirmed', attempts: 10, lastError: 'HTTP 503',
      lastDeliveryId, firstAttemptAt: expect.any(String), lastAttemptAt: expect.any(String), endpointDisabled: true,
    });
    const [disabled] = ofType('/nex/other', other.secret, 'webhook_endpoint.disabled');
    expect(disabled!.data).toMatchObject({ endpointId: broken.id, reason: 'failing', eventId: event.id, attempts: 10, lastError: 'HTTP 503' });
    // The failing endpoint got the event's ten attempts and nothing else.
    expect(receiver.requestsTo('/nex/broken')).toHaveLength(10);
    expect(receiver.requestsTo('/nex/broken').every((r) => JSON.parse(r.body).id === event.id)).toBe(true);

    // The conclusion run again (a retried activity) finds both events written.
    const activities = createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config: stack.config });
    expect(await activities.concludeExhaustedDelivery({ eventId: event.id, endpointId: broken.id })).toEqual({ disabled: true });
    await activities.sweepOutbox();
    expect(await storedNotices(store, 'webhook_delivery.exhausted')).toBe(1);
    expect(await storedNotices(store, 'webhook_endpoint.disabled')).toBe(1);
    expect(verified('/nex/other', other.secret).filter((b) => b.type !== 'payment_link.confirmed')).toHaveLength(2);
  }, 60_000);

  it('goes to the other endpoints even when the failing one stays enabled (something reached it meanwhile), and never to it', async () => {
    const store = await stack.createStore();
    // Fails the first event's attempts only: the second event gets through while the first is retried.
    receiver.on('/nok/flaky', (req) => (JSON.parse(req.body).data.merchantRef === 'fails' ? { status: 500 } : { status: 200 }));
    const flaky = await endpoint(store, '/nok/flaky');
    const other = await endpoint(store, '/nok/other', { enabledEvents: ['webhook_delivery.exhausted'] });
    const { event } = await emit(store, { data: { merchantRef: 'fails' } });
    await emit(store, { data: { merchantRef: 'passes' } });
    expect(await finished(event.id, flaky.id)).toMatchObject({ outcome: 'exhausted', endpointDisabled: false });
    await eventually(async () => ofType('/nok/other', other.secret, 'webhook_delivery.exhausted'), (b) => b.length === 1, 'the notice', 45_000);
    expect((await getEndpoint(store, flaky.id)).status).toBe('enabled');
    expect(ofType('/nok/other', other.secret, 'webhook_delivery.exhausted')[0]!.data).toMatchObject({ endpointId: flaky.id, endpointDisabled: false });
    expect(receiver.requestsTo('/nok/flaky').map((r) => JSON.parse(r.body).type)).not.toContain('webhook_delivery.exhausted');

    // The dashboard lists it with "Send again"; sent again and delivered, it leaves the list.
    const session = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'developer'));
    const page = async () => (await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/webhooks', headers: { cookie: session.cookie } })).text;
    const shown = await page();
    const notice = /<section class="notice error" role="alert" data-testid="exhausted-deliveries">([\s\S]*?)<\/section>/.exec(shown)?.[1] ?? '';
    expect(notice).toContain(event.id);
    expect(notice).toContain('HTTP 500');
    const action = /action="(\/dashboard\/webhooks\/[^"]+\/retry)"/.exec(notice)?.[1];
    expect(action).toBe(`/dashboard/webhooks/${flaky.id}/deliveries/${ofType('/nok/other', other.secret, 'webhook_delivery.exhausted')[0]!.data.lastDeliveryId}/retry`);
    receiver.on('/nok/flaky', () => ({ status: 200 }));
    const sent = await httpCall(stack.baseUrl, {
      method: 'POST', url: action!, payload: new URLSearchParams({ csrf: session.csrf }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl, cookie: session.cookie },
    });
    expect(sent.status).toBe(303);
    expect(await page()).not.toContain('data-testid="exhausted-deliveries"');
  }, 60_000);

  it('raises nothing when a delivery of a notice itself runs out of attempts: no loop', async () => {
    const store = await stack.createStore();
    receiver.on('/nloop/broken', () => ({ status: 503 }));
    const broken = await endpoint(store, '/nloop/broken');
    const other = await endpoint(store, '/nloop/other');
    const { event } = await emit(store, { type: 'webhook_delivery.exhausted', data: { endpointId: 'we_elsewhere' } });
    expect(await finished(event.id, broken.id)).toMatchObject({ outcome: 'exhausted', endpointDisabled: true });
    // Disabled (nothing reached it), yet no event was raised for it.
    expect((await getEndpoint(store, broken.id)).status).toBe('disabled');
    expect(await storedNotices(store, 'webhook_endpoint.disabled')).toBe(0);
    expect(await storedNotices(store, 'webhook_delivery.exhausted')).toBe(1);
    expect(verified('/nloop/other', other.secret).map((b) => b.id)).toEqual([event.id]);
  }, 60_000);
});

describe('the dashboard', () => {
  it('shows an endpoint Malipo disabled with its reason, and an exhausted delivery of a disabled endpoint without "Send again"', async () => {
    const store = await stack.createStore();
    receiver.on('/ndash/broken', () => ({ status: 502 }));
    const broken = await endpoint(store, '/ndash/broken');
    const { event } = await emit(store);
    await finished(event.id, broken.id);
    await eventually(() => storedNotices(store, 'webhook_delivery.exhausted'), (n) => n === 1, 'the exhausted event');
    const session = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'developer'));
    const page = (await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/webhooks', headers: { cookie: session.cookie } })).text;
    const row = new RegExp(`<tr data-endpoint="${broken.id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
    expect(row).toContain('data-testid="disabled-reason">Disabled automatically on');
    const notice = /data-testid="exhausted-deliveries">([\s\S]*?)<\/section>/.exec(page)?.[1] ?? '';
    expect(notice).toContain(event.id);
    expect(notice).toContain('Enable the endpoint to send it again.');
    expect(notice).not.toContain('/retry');
  }, 60_000);
});
