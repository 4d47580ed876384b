import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { desktop, freePort, launchBrowser, saveScreenshot } from '../helpers/browser.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { dashboardUser, signInHttp, signInPage, type DashboardUser } from '../helpers/dashboard-users.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { httpCall } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { TcpSwitch } from '../helpers/tcp-switch.js';
import { eventually } from '../helpers/wait.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The dashboard's payment-link pages in Chromium on the real stack: the list (status, reference
 * search, pages), creating a link with metadata, a link's detail page with its timeline (the
 * workflow's Temporal history merged with the records), cancel and simulate, tenancy and roles,
 * and the page with Temporal unreachable. Temporal is reached through a switch the last test
 * turns off.
 */
const temporalUi = 'http://temporal-ui.test:8233';
let stack: Stack;
let browser: Browser;
let receiver: WebhookReceiver;
let temporalSwitch: TcpSwitch;
let daraja: DarajaEmulator;
const paybill = sandboxPaybill('links-5e2a');
let store: CreatedStore;
let developer: DashboardUser;
/** Every browser-side complaint (a CSP refusal, a script error) seen while a page was open. */
const complaints: string[] = [];

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  daraja = await startDarajaEmulator({ merchants: [paybill] });
  temporalSwitch = await TcpSwitch.start(process.env.MALIPO_TEST_TEMPORAL_ADDRESS!);
  const port = await freePort();
  stack = await startStack(
    {
      PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, TEMPORAL_UI_URL: `${temporalUi}/`,
      ENCRYPTION_KEY: formatKeyEntry(generateKey('e2e')), WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback', WEBHOOK_RETRY_SCALE: '0.001',
      MPESA_SANDBOX_URL: daraja.url,
    },
    { temporalAddress: temporalSwitch.address },
  );
  browser = await launchBrowser();
  store = await stack.createStore('Links Deli');
  await connectAllRails(stack, store.clientId, 'test');
  developer = await dashboardUser(stack, store, 'developer');
}, 120_000);
afterAll(async () => {
  temporalSwitch?.onAgain();
  await browser?.close();
  await stack?.stop();
  await temporalSwitch?.close();
  await receiver?.down();
  await daraja?.close();
});

async function signedIn(user: DashboardUser): Promise<Page> {
  const context = await browser.newContext(desktop);
  const page = await context.newPage();
  // Pages answered 4xx/5xx on purpose are logged as "Failed to load resource"; anything else counts.
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && complaints.push(m.text()));
  page.on('pageerror', (e) => complaints.push(e.message));
  await signInPage(page, stack.baseUrl, user);
  return page;
}

const key = () => store.keys.test.secretKey;
async function createLink(payload: Record<string, unknown> = {}, k = key()): Promise<string> {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: k, payload: { usdtAmount: '3', enabledRails: ['USDT_BSC'], ...payload } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}
const apiLink = async (id: string, k = key()) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key: k })).body;
const linkCount = async (storeId: string) =>
  stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM payment_links WHERE store_id = ${storeId}`);
const text = (page: Page, selector: string) => page.locator(selector).innerText();
const timelineText = (page: Page) => text(page, '[data-testid="timeline"]');

/** A dashboard form posted over plain HTTP with a session's cookie and CSRF token (what a forged or replayed submit looks like). */
const post = (session: { cookie: string; csrf: string }, url: string, fields: Record<string, string> = {}) =>
  httpCall(stack.baseUrl, {
    method: 'POST', url,
    headers: { cookie: session.cookie, origin: stack.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ csrf: session.csrf, ...fields }).toString(),
  });

describe('payment links list', () => {
  it('filters by status, searches by reference, pages, and opens a link from its row', async () => {
    const listStore = await stack.createStore('List Shop');
    await connectAllRails(stack, listStore.clientId, 'test');
    const k = listStore.keys.test.secretKey;
    const first = await createLink({ merchantRef: 'order-7', description: 'Chai <b>x2</b>' }, k);
    const second = await createLink({ merchantRef: 'order-7', usdtAmount: '12.5' }, k);
    await createLink({ merchantRef: 'order-70' }, k);
    for (let i = 0; i < 17; i++) await createLink({}, k);
    const cancelled = await createLink({ merchantRef: 'to-cancel' }, k);
    expect((await stack.request({ method: 'POST', url: `/v1/payment-links/${cancelled}/cancel`, key: k })).status).toBe(200);

    const page = await signedIn(await dashboardUser(stack, listStore, 'developer'));
    await expect(page.locator('tr[data-link]').count()).resolves.toBe(20);
    // The first screen is the list, above the create form; /dashboard/links is the same list.
    const order = await page.evaluate(() => [...document.querySelectorAll('#all-links, #new-link')].map((e) => e.id));
    expect(order).toEqual(['all-links', 'new-link']);
    await expect(text(page, `tr[data-link="${second}"] td[data-testid="paid-with"]`)).resolves.toBe('—');
    const atLinks = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/links', headers: { cookie: (await signInHttp(stack.baseUrl, await dashboardUser(stack, listStore, 'viewer'))).cookie } });
    expect(atLinks.status).toBe(200);
    expect(atLinks.text.match(/<tr data-link=/g)?.length).toBe(20);
    await expect(text(page, '.pager')).resolves.toContain('Page 1 of 2 · 21 links');
    await saveScreenshot(page, 'dashboard/links.png');
    await page.click('a[rel="next"]');
    await expect(page.locator('tr[data-link]').count()).resolves.toBe(1);
    await expect(page.locator(`tr[data-link="${first}"]`).count()).resolves.toBe(1);

    // The search is the API's exact merchantRef filter: order-70 is not order-7.
    await page.goto(`${stack.baseUrl}/dashboard`);
    await page.fill('#merchantRef', 'order-7');
    await page.click('.filter button');
    await page.waitForURL(/merchantRef=order-7/);
    const rows = page.locator('tr[data-link]');
    await expect(rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-link')))).resolves.toEqual([second, first]);
    await expect(text(page, '.pager')).resolves.toContain('2 links');
    await expect(page.locator(`tr[data-link="${first}"] small`).innerText()).resolves.toBe('Chai <b>x2</b>');

    await page.fill('#merchantRef', '');
    await page.selectOption('#status', 'CANCELLED');
    await page.click('.filter button');
    await expect(rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-link')))).resolves.toEqual([cancelled]);
    await page.selectOption('#status', 'CONFIRMED');
    await page.fill('#merchantRef', 'order-7');
    await page.click('.filter button');
    await expect(text(page, '.empty')).resolves.toContain('No payment links with status CONFIRMED and with reference “order-7”');
    // A bad query gets the list API's message, and the unfiltered first page.
    await page.goto(`${stack.baseUrl}/dashboard?page=0`);
    await expect(text(page, '.notice.error')).resolves.toContain("Invalid 'page'");

    await page.goto(`${stack.baseUrl}/dashboard?merchantRef=order-7`);
    await page.click(`tr[data-link="${second}"] a.link-id`);
    await page.waitForURL(`${stack.baseUrl}/dashboard/links/${second}`);
    await expect(text(page, 'h1')).resolves.toBe(`Payment link ${second}`);
    await expect(text(page, '[data-testid="link-amount"]')).resolves.toBe('12.5 USDT');
    await page.context().close();
  });
});

describe('creating a payment link', () => {
  it('takes metadata as JSON checked by the API schema, shows a bad field next to it and creates nothing, then creates once', async () => {
    const page = await signedIn(developer);
    const before = await linkCount(store.clientId);
    // The list comes first; the button opens the form on its own page.
    await page.click('[data-testid="new-link"]');
    await page.waitForURL(`${stack.baseUrl}/dashboard/links/new`);
    await expect(page.locator('tr[data-link]').count()).resolves.toBe(0);
    await page.check('input[name="enabledRails"][value="USDT_BSC"]');
    await page.fill('#f-usdtAmount', '4.20');
    await page.fill('#f-merchantRef', 'order-meta');
    await page.fill('#f-metadata', '{"orderId": "A-17",');
    await page.click('button:has-text("Create link")');
    await expect(text(page, '[data-error-for="metadata"]')).resolves.toMatch(/^Invalid 'metadata': must be a JSON object/);
    await expect(page.locator('#f-metadata').getAttribute('aria-invalid')).resolves.toBe('true');
    // What was typed stays in the form.
    await expect(page.locator('#f-metadata').inputValue()).resolves.toBe('{"orderId": "A-17",');
    await expect(page.locator('#f-merchantRef').inputValue()).resolves.toBe('order-meta');

    await page.fill('#f-metadata', '["not", "an object"]');
    await page.click('button:has-text("Create link")');
    await expect(text(page, '[data-error-for="metadata"]')).resolves.toMatch(/^Invalid 'metadata': /);
    await page.fill('#f-metadata', '{"orderId": "A-17"}');
    await page.fill('#f-usdtAmount', '4.2000001');
    await page.click('button:has-text("Create link")');
    await expect(text(page, '[data-error-for="usdtAmount"]')).resolves.toMatch(/^Invalid 'usdtAmount': /);
    expect(await linkCount(store.clientId)).toBe(before);

    await page.fill('#f-usdtAmount', '4.20');
    await page.fill('#f-metadata', '{"orderId": "A-17", "items": [1, 2], "gift": {"wrap": true}}');
    await page.click('button:has-text("Create link")');
    await page.waitForURL(/\/dashboard\?created=pl_/);
    const id = new URL(page.url()).searchParams.get('created')!;
    await page.reload(); // post/redirect/get: a reload creates nothing
    expect(await linkCount(store.clientId)).toBe(before + 1);
    expect(await apiLink(id)).toMatchObject({ usdtAmount: '4.2', merchantRef: 'order-meta', metadata: { orderId: 'A-17', items: [1, 2], gift: { wrap: true } } });
    await page.click(`text=details`);
    await page.waitForURL(`${stack.baseUrl}/dashboard/links/${id}`);
    expect(JSON.parse(await text(page, '[data-testid="link-metadata"]'))).toEqual({ orderId: 'A-17', items: [1, 2], gift: { wrap: true } });
    await page.context().close();
  });
});

describe('a payment link in detail', () => {
  it('simulates a payment through the button and shows the timeline: engine steps, the records and each webhook attempt', async () => {
    const hooks = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: key(), payload: { url: receiver.url('/links-hooks') } });
    expect(hooks.status).toBe(201);
    receiver.on('/links-hooks', (_req, nth) => ({ status: nth === 1 ? 500 : 200 }));
    const id = await createLink({ enabledRails: ['USDT_BSC', 'USDT_TRON'], usdtAmount: '7.5', merchantRef: 'order-sim', description: 'Mandazi' });
    const link = await apiLink(id);

    const page = await signedIn(developer);
    await page.goto(`${stack.baseUrl}/dashboard/links/${id}`);
    await expect(text(page, '[data-testid="link-status"]')).resolves.toContain('PENDING');
    const facts = await text(page, '.facts');
    for (const shown of [link.bscAddress, link.tronAddress, 'order-sim', 'Mandazi', link.checkoutUrl]) expect(facts).toContain(shown);
    await expect(page.getByTestId('temporal-ui').getAttribute('href')).resolves.toBe(`${temporalUi}/namespaces/default/workflows/payment-link%2F${id}`);
    await eventually(async () => {
      await page.reload();
      return (await timelineText(page)).includes('Workflow started') ? true : undefined;
    }, 'the workflow start in the timeline');
    await expect(page.getByTestId('engine-note').count()).resolves.toBe(0);

    await page.selectOption('#f-rail', 'USDT_BSC');
    await page.click('button:has-text("Simulate payment")');
    await page.waitForURL(`${stack.baseUrl}/dashboard/links/${id}?done=simulated`);
    await expect(text(page, '.notice.ok')).resolves.toContain('A simulated payment was sent through the workflow');
    await expect(text(page, '[data-testid="link-status"]')).resolves.toContain('CONFIRMED');
    await expect(page.locator('button:has-text("Cancel link")').count()).resolves.toBe(0);
    await expect(text(page, '[data-testid="payments"]')).resolves.toMatch(/BNB Smart Chain[\s\S]*7\.5 USDT[\s\S]*confirmed[\s\S]*payment/);

    // The webhook's first attempt fails (500) and its retry succeeds: both are on the timeline.
    const timeline = await eventually(async () => {
      await page.reload();
      const t = await timelineText(page);
      return t.includes('Webhook attempt 2: succeeded (HTTP 200)') ? t : undefined;
    }, 'both webhook attempts in the timeline');
    // The payment and its event are written by one activity; the workflow records the status after it,
    // while the outbox relay sends the event the moment it commits (either may come first).
    for (const order of [
      ['Link created', 'Workflow started', 'Simulated payment requested', 'Simulated payment counted', 'Status CONFIRMED'],
      ['Simulated payment counted', 'Webhook event payment_link.confirmed written', 'Webhook attempt 1: failed (HTTP 500)', 'Webhook attempt 2: succeeded (HTTP 200)'],
    ]) {
      const positions = order.map((title) => timeline.indexOf(title));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    }
    expect(timeline).toContain('Webhook event dispatched');
    expect(timeline).toContain(receiver.url('/links-hooks'));
    // One CONFIRMED entry: the workflow's, not the record's as well.
    expect(timeline.match(/Status CONFIRMED/g)).toHaveLength(1);
    await expect(page.locator('.tl[data-source="workflow"]').count()).resolves.toBeGreaterThan(2);
    // No secret on the page: not the store's keys, not the endpoint's signing secret.
    const html = await page.content();
    for (const secret of [key(), store.keys.test.publishableKey, 'whsec_']) expect(html).not.toContain(secret);
    await saveScreenshot(page, 'dashboard/link-detail.png');
    await page.context().close();
  });

  it('shows an M-Pesa payment against the Daraja emulator: prompt, callback, STK query, confirmation; never the callback token or credentials', async () => {
    const mpesaStore = await stack.createStore('M-Pesa Deli');
    const k = mpesaStore.keys.test.secretKey;
    const connected = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${mpesaStore.clientId}/mobile-money/connect`, key: k, payload: connectBody(paybill) });
    expect(connected.status).toBe(200);
    const id = await createLink({ enabledRails: ['MOBILE_MONEY'], usdtAmount: undefined, mobileMoneyAmount: 260 }, k);
    const phone = '254712340077';
    daraja.script(phone, { result: 'success' });
    const pay = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${id}/pay/mobile-money`, key: k, payload: { phoneNumber: phone } });
    expect(pay.status).toBe(200);
    const prompt = daraja.state.prompts.get(pay.body.checkoutRequestId)!;
    const token = prompt.callbackUrl.split('/').pop()!;
    await daraja.complete(pay.body.checkoutRequestId, 'success');
    await eventually(async () => ((await apiLink(id, k)).status === 'CONFIRMED' ? true : undefined), 'the M-Pesa payment to confirm');

    const page = await signedIn(await dashboardUser(stack, mpesaStore, 'viewer'));
    await page.goto(`${stack.baseUrl}/dashboard/links/${id}`);
    const timeline = await timelineText(page);
    const order = ['M-Pesa prompt requested', 'M-Pesa prompt sent to the phone', 'Status PROCESSING', 'M-Pesa callback stored', 'STK query: paid', 'Payment counted', 'Status CONFIRMED'];
    const positions = order.map((title) => timeline.indexOf(title));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(timeline).toContain('M-Pesa callback received by the workflow');
    expect(timeline).toContain(`CheckoutRequestID ${pay.body.checkoutRequestId}`);
    expect(timeline).toContain('260 KES to 2547•••••077');
    // The payer's phone is masked the same way on every page: the facts, the payments, the list.
    await expect(text(page, '[data-testid="link-payer"]')).resolves.toBe('2547•••••077');
    await expect(text(page, '[data-testid="payments"]')).resolves.toContain('2547•••••077');
    await page.goto(`${stack.baseUrl}/dashboard/links`);
    await expect(text(page, `tr[data-link="${id}"] td[data-testid="paid-with"]`)).resolves.toBe('M-Pesa\n2547•••••077');
    await page.goto(`${stack.baseUrl}/dashboard/links/${id}`);
    const html = await page.content();
    // The emulator's CheckoutRequestID ends with the phone number, as Daraja's own ids may; the id is shown, the phone nowhere else.
    expect(html.replaceAll(pay.body.checkoutRequestId, '')).not.toContain(phone);
    for (const secret of [token, paybill.consumerKey, paybill.consumerSecret, paybill.passkey, k]) expect(html).not.toContain(secret);
    await page.context().close();
  });

  it('cancels a PENDING link through the button; a replayed cancel gets the 409 message and changes nothing', async () => {
    const id = await createLink({ merchantRef: 'order-cancel' });
    const page = await signedIn(developer);
    await page.goto(`${stack.baseUrl}/dashboard/links/${id}`);
    page.once('dialog', (d) => void d.accept());
    await page.click('button:has-text("Cancel link")');
    await page.waitForURL(`${stack.baseUrl}/dashboard/links/${id}?done=cancelled`);
    await expect(text(page, '.notice.ok')).resolves.toContain('The payment link was cancelled');
    await expect(text(page, '[data-testid="link-status"]')).resolves.toContain('CANCELLED');
    await expect(page.locator('button:has-text("Cancel link"), button:has-text("Simulate payment")').count()).resolves.toBe(0);
    const timeline = await timelineText(page);
    expect(timeline).toContain('Cancel requested');
    expect(timeline.match(/Status CANCELLED/g)).toHaveLength(1);
    expect((await apiLink(id)).status).toBe('CANCELLED');

    const session = await signInHttp(stack.baseUrl, developer);
    const again = await post(session, `/dashboard/links/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.text).toContain('only a PENDING link can be cancelled');
    const simulate = await post(session, `/dashboard/links/${id}/simulate`, { rail: 'USDT_BSC' });
    expect(simulate.status).toBe(409);
    const badRail = await post(session, `/dashboard/links/${await createLink()}/simulate`, { rail: 'USDT_NOPE' });
    expect(badRail.status).toBe(400);
    expect(badRail.text).toContain('Invalid &#39;rail&#39;');
    expect((await apiLink(id)).status).toBe('CANCELLED');
    await page.context().close();
  });

  it("answers another store's link id, or a malformed one, with a 404 page and acts on neither", async () => {
    const other = await stack.createStore('Other Deli');
    await connectAllRails(stack, other.clientId, 'test');
    const theirs = await createLink({}, other.keys.test.secretKey);
    const page = await signedIn(developer);
    for (const id of [theirs, 'pl_nope', 'not-a-link']) {
      const res = await page.goto(`${stack.baseUrl}/dashboard/links/${id}`);
      expect(res!.status()).toBe(404);
      await expect(text(page, '[role="alert"]')).resolves.toBe('No such payment link.');
    }
    const session = await signInHttp(stack.baseUrl, developer);
    expect((await post(session, `/dashboard/links/${theirs}/cancel`)).status).toBe(404);
    expect((await post(session, `/dashboard/links/${theirs}/simulate`, { rail: 'USDT_BSC' })).status).toBe(404);
    expect((await apiLink(theirs, other.keys.test.secretKey)).status).toBe('PENDING');
    await page.context().close();
  });
});

describe('roles', () => {
  it('shows a viewer the pages without any action, and refuses a viewer’s forged POST with a 403 that changes nothing', async () => {
    const viewer = await dashboardUser(stack, store, 'viewer');
    const id = await createLink({ merchantRef: 'order-viewer' });
    const page = await signedIn(viewer);
    await expect(page.locator(`tr[data-link="${id}"]`).count()).resolves.toBe(1);
    await expect(page.locator('form[action="/dashboard/links"]').count()).resolves.toBe(0);
    await page.goto(`${stack.baseUrl}/dashboard/links/${id}`);
    await expect(text(page, '[data-testid="link-ref"]')).resolves.toBe('order-viewer');
    await expect(page.locator('form[action*="/cancel"], form[action*="/simulate"], button:has-text("Cancel link")').count()).resolves.toBe(0);

    const before = await linkCount(store.clientId);
    const session = await signInHttp(stack.baseUrl, viewer);
    for (const [url, fields] of [
      [`/dashboard/links/${id}/cancel`, {}],
      [`/dashboard/links/${id}/simulate`, { rail: 'USDT_BSC' }],
      ['/dashboard/links', { enabledRails: 'USDT_BSC', usdtAmount: '1' }],
    ] as const) {
      const res = await post(session, url, fields);
      expect(res.status).toBe(403);
      expect(res.text).toContain('Nothing was changed');
    }
    expect((await apiLink(id)).status).toBe('PENDING');
    expect(await linkCount(store.clientId)).toBe(before);
    await page.context().close();
  });
});

describe('with Temporal unreachable', () => {
  it('shows the records alone with a note, and says when a workflow has not started yet; never a 500', async () => {
    const started = await createLink({ merchantRef: 'order-before' });
    await eventually(async () => ((await apiLink(started)).status === 'PENDING' ? true : undefined), 'the link');
    const page = await signedIn(developer);
    temporalSwitch.off();
    try {
      const waiting = await createLink({ merchantRef: 'order-during' });
      const res = await page.goto(`${stack.baseUrl}/dashboard/links/${waiting}`);
      expect(res!.status()).toBe(200);
      await expect(text(page, '[data-testid="engine-note"]')).resolves.toContain('The workflow has not started yet');
      await expect(timelineText(page)).resolves.toContain('Link created');
      // An action needs the engine: a clear 503 on the page, nothing changed.
      page.once('dialog', (d) => void d.accept());
      const [cancel] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('button:has-text("Cancel link")')]);
      expect(cancel.status()).toBe(503);
      await expect(text(page, '.notice.error')).resolves.toContain('cannot be reached right now');
      expect((await apiLink(waiting)).status).toBe('PENDING');

      const down = await page.goto(`${stack.baseUrl}/dashboard/links/${started}`);
      expect(down!.status()).toBe(200);
      await expect(text(page, '[data-testid="engine-note"]')).resolves.toContain('Temporal could not be reached');
      await expect(page.locator('.tl[data-source="workflow"]').count()).resolves.toBe(0);
      await expect(timelineText(page)).resolves.toContain('Link created');
    } finally {
      temporalSwitch.onAgain();
    }
    await page.context().close();
  });
});

describe('the browser', () => {
  it('reported no refused style or script and no error on any of these pages', () => {
    expect(complaints).toEqual([]);
  });
});
