import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import type { Role } from '../../domain/roles.js';
import { desktop, freePort, launchBrowser, saveScreenshot } from '../helpers/browser.js';
import { dashboardUser, signInHttp, signInPage } from '../helpers/dashboard-users.js';
import { httpCall } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The dashboard's webhook pages in a real browser on the real stack: endpoints with their status
 * and actions (enable, roll secret, delete, send a test event) and the delivery log (payload,
 * response, retry). The receiver is a real server on 127.0.0.1 (allowed for test webhooks).
 */
let stack: Stack;
let browser: Browser;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  const port = await freePort();
  stack = await startStack({
    PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    ENCRYPTION_KEY: formatKeyEntry(generateKey('e2e')),
    WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback',
  });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await receiver?.down();
});

const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

async function signedIn(store: CreatedStore, role: Role = 'owner'): Promise<Page> {
  const context = await browser.newContext(desktop);
  contexts.push(context);
  const page = await context.newPage();
  // Roll and delete ask for confirmation (the page's script); accept it as a person would.
  page.on('dialog', (d) => void d.accept());
  await signInPage(page, stack.baseUrl, await dashboardUser(stack, store, role));
  return page;
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();
const row = (page: Page, endpointId: string) => page.locator(`tr[data-endpoint="${endpointId}"]`);

async function apiEndpoint(store: CreatedStore, path: string): Promise<{ id: string; secret: string }> {
  const res = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey, payload: { url: receiver.url(path) } });
  expect(res.status).toBe(201);
  return res.body;
}

async function addEndpointInPage(page: Page, path: string): Promise<{ id: string; secret: string }> {
  await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
  await page.fill('#f-url', receiver.url(path));
  await page.click('button:has-text("Add endpoint")');
  const secret = await text(page, '[data-testid="webhook-secret"]');
  const id = (await page.locator('tr[data-endpoint]').first().getAttribute('data-endpoint'))!;
  return { id, secret };
}

describe('dashboard webhooks', () => {
  it('sends a test event that the receiver verifies, and shows it in the log with the response and payload', async () => {
    const store = await stack.createStore('Test Event Shop');
    const page = await signedIn(store);
    const ep = await addEndpointInPage(page, '/dash-test');
    await row(page, ep.id).locator('button:has-text("Send test event")').click();
    await page.waitForURL(new RegExp(`/dashboard/webhooks/${ep.id}\\?tested=evt_`));
    const eventId = new URL(page.url()).searchParams.get('tested')!;
    await expect(text(page, '.notice.ok')).resolves.toMatch(new RegExp(`Test event ${eventId} delivered: HTTP 200 in \\d+ ms`));

    const [received] = receiver.requestsTo('/dash-test');
    expect(received!.headers['webhook-id']).toBe(eventId);
    expect(verifyWebhook(ep.secret, received!)).toMatchObject({ id: eventId, type: 'webhook_endpoint.tested', data: { endpointId: ep.id } });

    const logRow = page.locator(`tr[data-event="${eventId}"]`);
    await expect(logRow.innerText()).resolves.toContain('webhook_endpoint.tested');
    await expect(logRow.locator('[data-testid="delivery-status"]').innerText()).resolves.toBe('succeeded');
    await expect(logRow.locator('[data-testid="response-status"]').innerText()).resolves.toBe('200');
    await expect(logRow.locator('[data-testid="latency"]').innerText()).resolves.toMatch(/^\d+ ms$/);
    const detail = page.locator(`tr[data-detail-of="${await logRow.getAttribute('data-delivery')}"]`);
    await detail.locator('summary').click();
    // The payload shown is the body that was signed and sent.
    expect(JSON.parse(await detail.locator('[data-testid="payload"]').innerText())).toEqual(JSON.parse(received!.body));
    // A loopback receiver's body is never stored (migration 0017): the page says so instead of showing nothing.
    await expect(detail.innerText()).resolves.toContain('HTTP 200. The body is not kept');
    await saveScreenshot(page, 'dashboard/webhook-deliveries.png');

    // Sending the same form again (a double submit) sends no second event.
    const form = await page.locator(`form[action="/dashboard/webhooks/${ep.id}/test"]`).evaluate((f) => Object.fromEntries(new FormData(f as HTMLFormElement) as never));
    const session = await page.context().cookies();
    const cookie = session.map((c) => `${c.name}=${c.value}`).join('; ');
    const post = () => httpCall(stack.baseUrl, {
      method: 'POST', url: `/dashboard/webhooks/${ep.id}/test`,
      headers: { cookie, origin: stack.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(form as Record<string, string>).toString(),
    });
    const [a, b] = [await post(), await post()];
    expect([a.status, b.status]).toEqual([303, 303]);
    expect(a.headers.location).toBe(b.headers.location);
    await eventually(async () => receiver.requestsTo('/dash-test').length, (n) => n === 2, 'the second test event');
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requestsTo('/dash-test')).toHaveLength(2);
  });

  it('rolls the secret: shown once, and the next delivery verifies with the new one (and the old one during the overlap)', async () => {
    const store = await stack.createStore('Roll Shop');
    const page = await signedIn(store);
    const ep = await addEndpointInPage(page, '/dash-roll');
    await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
    await row(page, ep.id).locator('button:has-text("Roll secret")').click();
    await expect(text(page, '.notice.ok')).resolves.toContain(`New signing secret for ${ep.id}`);
    const rolled = await text(page, '[data-testid="webhook-secret"]');
    expect(rolled).toMatch(/^whsec_/);
    expect(rolled).not.toBe(ep.secret);
    await expect(text(page, '.notice.ok')).resolves.toMatch(/every delivery is signed with both the new and the old secret/);
    // Shown once: the list never shows it again.
    await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
    expect(await page.content()).not.toContain(rolled);

    await row(page, ep.id).locator('button:has-text("Send test event")').click();
    await page.waitForURL(/\?tested=evt_/);
    const [received] = receiver.requestsTo('/dash-roll');
    expect(verifyWebhook(rolled, received!)).toMatchObject({ type: 'webhook_endpoint.tested' });
    expect(verifyWebhook(ep.secret, received!)).toMatchObject({ type: 'webhook_endpoint.tested' });
    expect(String(received!.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  it('shows why an endpoint was disabled and enables it again', async () => {
    const store = await stack.createStore('Gone Shop');
    let gone = true;
    receiver.on('/dash-gone', () => (gone ? { status: 410 } : { status: 200 }));
    const ep = await apiEndpoint(store, '/dash-gone');
    await apiEndpoint(store, '/dash-healthy');
    await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/test`, key: store.keys.test.secretKey });
    const page = await signedIn(store);
    await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
    await expect(row(page, ep.id).locator('[data-testid="endpoint-status"]').innerText()).resolves.toBe('disabled');
    await expect(row(page, ep.id).locator('[data-testid="disabled-reason"]').innerText()).resolves.toContain('answered 410 Gone');
    // A disabled endpoint takes no test event until it is enabled.
    await expect(row(page, ep.id).locator('button:has-text("Send test event")').count()).resolves.toBe(0);
    await saveScreenshot(page, 'dashboard/webhooks.png');

    gone = false;
    await row(page, ep.id).locator('button:has-text("Enable")').click();
    await page.waitForURL(new RegExp(`/dashboard/webhooks\\?enabled=${ep.id}$`));
    await expect(text(page, '.notice.ok')).resolves.toContain(`Endpoint ${ep.id} is enabled`);
    await expect(row(page, ep.id).locator('[data-testid="endpoint-status"]').innerText()).resolves.toBe('enabled');
    await expect(row(page, ep.id).locator('[data-testid="disabled-reason"]').count()).resolves.toBe(0);
    const api = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}`, key: store.keys.test.secretKey });
    expect(api.body).toMatchObject({ status: 'enabled', disabledReason: null });
  });

  it('retries a failed delivery from the log with the same service as the API', async () => {
    const store = await stack.createStore('Retry Shop');
    let healthy = false;
    receiver.on('/dash-retry', () => (healthy ? { status: 200 } : { status: 500, body: 'down for maintenance' }));
    const page = await signedIn(store);
    const ep = await addEndpointInPage(page, '/dash-retry');
    await row(page, ep.id).locator('button:has-text("Send test event")').click();
    await page.waitForURL(/\?tested=evt_/);
    await expect(text(page, '.notice.error')).resolves.toContain('failed: HTTP 500. It is retried on the normal schedule.');
    const eventId = new URL(page.url()).searchParams.get('tested')!;

    healthy = true;
    await page.locator(`tr[data-event="${eventId}"] button:has-text("Retry")`).first().click();
    await page.waitForURL(/\?retried=wd_/);
    await expect(text(page, '.notice.ok')).resolves.toMatch(/Sent again: attempt 2 got HTTP 200 in \d+ ms/);
    const log = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}/deliveries`, key: store.keys.test.secretKey });
    expect(log.body.data.map((d: { attempt: number; status: string }) => [d.attempt, d.status])).toEqual([[2, 'succeeded'], [1, 'failed']]);
    expect(receiver.requestsTo('/dash-retry').map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId]);
  });

  it("deletes an endpoint, and answers another store's endpoint or delivery with a 404 page that changes nothing", async () => {
    const store = await stack.createStore('Delete Shop');
    const other = await stack.createStore('Other Shop');
    const theirs = await apiEndpoint(other, '/dash-theirs');
    const sent = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${theirs.id}/test`, key: other.keys.test.secretKey });
    const theirDelivery = sent.body.firstAttempt.id as string;
    const mine = await apiEndpoint(store, '/dash-mine');

    const page = await signedIn(store);
    const res = await page.goto(`${stack.baseUrl}/dashboard/webhooks/${theirs.id}`);
    expect(res!.status()).toBe(404);
    await expect(text(page, '[role="alert"]')).resolves.toContain('No such webhook endpoint');

    const { cookie, csrf } = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'owner'));
    const post = (url: string) => httpCall(stack.baseUrl, {
      method: 'POST', url, headers: { cookie, origin: stack.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrf, nonce: 'a'.repeat(24) }).toString(),
    });
    for (const action of ['enable', 'test', 'roll-secret', 'delete']) {
      expect({ action, status: (await post(`/dashboard/webhooks/${theirs.id}/${action}`)).status }).toEqual({ action, status: 404 });
    }
    expect((await post(`/dashboard/webhooks/${theirs.id}/deliveries/${theirDelivery}/retry`)).status).toBe(404);
    expect((await post(`/dashboard/webhooks/${mine.id}/deliveries/${theirDelivery}/retry`)).status).toBe(404);
    const theirsNow = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${theirs.id}/deliveries`, key: other.keys.test.secretKey });
    expect(theirsNow.body.data).toHaveLength(1);
    expect(receiver.requestsTo('/dash-theirs')).toHaveLength(1);

    await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
    await row(page, mine.id).locator('button:has-text("Delete")').click();
    await page.waitForURL(new RegExp(`\\?deleted=${mine.id}$`));
    await expect(row(page, mine.id).count()).resolves.toBe(0);
    const gone = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${mine.id}`, key: store.keys.test.secretKey });
    expect(gone.status).toBe(404);
  });

  it('shows a viewer the endpoints and the log without buttons, and refuses a forged viewer POST with a 403 that changes nothing', async () => {
    const store = await stack.createStore('Viewer Shop');
    const ep = await apiEndpoint(store, '/dash-viewer');
    await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/test`, key: store.keys.test.secretKey });
    const page = await signedIn(store, 'viewer');
    await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
    await expect(row(page, ep.id).innerText()).resolves.toContain(receiver.url('/dash-viewer'));
    await expect(page.locator('main button, main form[method="post"]').count()).resolves.toBe(0);
    await page.goto(`${stack.baseUrl}/dashboard/webhooks/${ep.id}`);
    await expect(page.locator('tr[data-delivery]').count()).resolves.toBe(1);
    await expect(page.locator('main button, main form[method="post"]').count()).resolves.toBe(0);

    const { cookie, csrf } = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'viewer'));
    const before = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${ep.id}`);
    for (const action of ['test', 'roll-secret', 'delete']) {
      const res = await httpCall(stack.baseUrl, {
        method: 'POST', url: `/dashboard/webhooks/${ep.id}/${action}`,
        headers: { cookie, origin: stack.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrf, nonce: 'b'.repeat(24) }).toString(),
      });
      expect({ action, status: res.status }).toEqual({ action, status: 403 });
      expect(res.text).toContain('Nothing was changed');
    }
    const after = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${ep.id}`);
    expect(after).toBe(before);
    expect((await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}`, key: store.keys.test.secretKey })).status).toBe(200);
  });
});
