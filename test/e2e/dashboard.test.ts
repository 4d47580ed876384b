import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { sql } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { freePort, launchBrowser } from '../helpers/browser.js';
import { dashboardUser, signInPage, type DashboardUser } from '../helpers/dashboard-users.js';
import { connectAllRails, evmXpub } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { sandboxPaybill } from '../helpers/daraja.js';

/** The merchant dashboard in a real browser (Debian Chromium driven by playwright-core). */
const paybill = sandboxPaybill('dash-4c1e');

let daraja: DarajaEmulator;
let stack: Stack;
let browser: Browser;
let receiver: WebhookReceiver;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [paybill] });
  receiver = await WebhookReceiver.start();
  const port = await freePort();
  stack = await startStack({
    PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey('e2e')),
    WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback', // the webhook receiver listens on 127.0.0.1
  });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await receiver?.down();
  await daraja?.close();
});

/**
 * Every page a test opened, to check afterwards that the password (and the store's secret keys,
 * which the dashboard never needs) reached no page and no cookie.
 */
const opened: { context: BrowserContext; html: string[]; secrets: string[] }[] = [];
afterEach(async () => {
  for (const { context, html, secrets } of opened.splice(0)) {
    expect(html.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      for (const body of html) expect(body).not.toContain(secret);
      for (const cookie of await context.cookies()) expect(cookie.value).not.toContain(secret);
    }
    await context.close();
  }
});

async function openContext(secrets: string[]): Promise<Page> {
  const context = await browser.newContext();
  const html: string[] = [];
  opened.push({ context, html, secrets });
  const page = await context.newPage();
  page.on('response', async (res) => {
    if ((res.headers()['content-type'] ?? '').startsWith('text/html')) html.push(await res.text().catch(() => ''));
  });
  return page;
}

const secretsOf = (store: CreatedStore, user: DashboardUser) => [user.password, store.keys.test.secretKey, store.keys.live.secretKey];

/** A new owner of `store`, signed in on a fresh page. */
async function signIn(store: CreatedStore): Promise<Page> {
  const user = await dashboardUser(stack, store);
  const page = await openContext(secretsOf(store, user));
  await signInPage(page, stack.baseUrl, user);
  return page;
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();
describe('dashboard sign-in', () => {
  it('refuses a wrong password, then signs in into a test-mode session cookie the page cannot read', async () => {
    const store = await stack.createStore('Kibanda Cafe');
    const user = await dashboardUser(stack, store);
    const page = await openContext(secretsOf(store, user));
    await page.goto(`${stack.baseUrl}/dashboard`);
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/login`);
    await page.fill('#f-email', user.email);
    await page.fill('#f-password', `${user.password}!`);
    await page.click('button:has-text("Sign in")');
    await expect(text(page, '[data-error-for="password"]')).resolves.toContain('The email or password is wrong.');
    // The email stays in the form; the password is never written back.
    await expect(page.locator('#f-email').inputValue()).resolves.toBe(user.email);
    await expect(page.locator('#f-password').inputValue()).resolves.toBe('');
    await expect(page.context().cookies()).resolves.toEqual([]);

    // The email as a person may type it: spaces around it, another case.
    await page.fill('#f-email', `  ${user.email.toUpperCase()} `);
    await page.fill('#f-password', user.password);
    await page.click('button:has-text("Sign in")');
    await page.waitForURL(`${stack.baseUrl}/dashboard`);
    await expect(text(page, 'h1')).resolves.toBe('Payment links');
    await expect(text(page, '[data-testid="environment"]')).resolves.toContain('Test mode');
    await expect(text(page, '.brand')).resolves.toContain('Kibanda Cafe');
    await expect(text(page, 'a.account')).resolves.toBe(user.email);
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'malipo_dashboard', httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    await expect(page.evaluate(() => document.cookie)).resolves.toBe('');

    // The switch in the header: live mode, then back.
    await page.click('[data-testid="switch-environment"]');
    await page.locator('[data-testid="environment"]', { hasText: 'Live mode' }).waitFor();
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard`);
    await page.click('[data-testid="switch-environment"]');
    await page.locator('[data-testid="environment"]', { hasText: 'Test mode' }).waitFor();
  });

  it('signs out: the session ends and the pages ask to sign in again', async () => {
    const store = await stack.createStore('Sign-out Shop');
    const page = await signIn(store);
    await page.click('button:has-text("Sign out")');
    await page.waitForURL(`${stack.baseUrl}/dashboard/login?signedOut=1`);
    await expect(text(page, '[role="status"]')).resolves.toBe('You are signed out.');
    await expect(page.context().cookies()).resolves.toEqual([]);
    await page.goto(`${stack.baseUrl}/dashboard/wallets`);
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/login`);
  });
});

const connectionOf = (storeId: string) =>
  stack.pool.maybeOne(sql.type(z.object({ shortcode: z.string() }))`SELECT shortcode FROM mobile_money_connections WHERE store_id = ${storeId}`);

describe('dashboard mobile money', () => {
  async function fillConnect(page: Page, passkey: string) {
    await page.fill('#f-consumerKey', paybill.consumerKey);
    await page.fill('#f-consumerSecret', paybill.consumerSecret);
    await page.fill('#f-shortcode', paybill.shortCode);
    await page.fill('#f-passkey', passkey);
    await expect(page.locator('#f-environment').inputValue()).resolves.toBe('sandbox');
    await page.click('button:has-text("Check and connect")');
  }

  it("shows the operator's reason for a rejected passkey and saves nothing, then connects and shows the shortcode", async () => {
    const store = await stack.createStore('Duka la Mama');
    const page = await signIn(store);
    await page.click('nav >> text=Mobile money');
    await expect(text(page, '[data-testid="mpesa-connection"]')).resolves.toContain('No M-Pesa shortcode is connected');

    await fillConnect(page, 'not-the-passkey');
    const alert = await text(page, '.notice.error');
    expect(alert).toContain('M-Pesa rejected the credentials');
    expect(alert).toContain('Wrong credentials');
    expect(alert).toContain('Nothing was saved');
    await expect(text(page, '[data-testid="mpesa-connection"]')).resolves.toContain('No M-Pesa shortcode is connected');
    // Credentials are never written back into the form.
    await expect(page.locator('#f-consumerSecret').inputValue()).resolves.toBe('');
    expect(await connectionOf(store.clientId)).toBeNull();

    await fillConnect(page, paybill.passkey);
    await page.waitForURL(/\/dashboard\/mobile-money\?connected=1$/);
    await expect(text(page, '[role="status"]')).resolves.toContain('connected');
    await expect(text(page, '[data-testid="mpesa-shortcode"]')).resolves.toBe('174379');
    await expect(text(page, '[data-testid="mpesa-environment"]')).resolves.toBe('sandbox');
    const html = await page.content();
    for (const secret of [paybill.consumerKey, paybill.consumerSecret, paybill.passkey]) expect(html).not.toContain(secret);
    expect(await connectionOf(store.clientId)).toEqual({ shortcode: '174379' });
  });
});

describe('dashboard wallets', () => {
  it('refuses a bad xpub with the API message, registers the EVM xpub showing its first address, and disconnects it', async () => {
    const store = await stack.createStore('Wallet Shop');
    const page = await signIn(store);
    await page.goto(`${stack.baseUrl}/dashboard/wallets`);
    const evm = page.locator('[data-wallet="evm"]');
    await evm.locator('input[name="xpub"]').fill('xpub-not-really');
    await evm.locator('button:has-text("Register")').click();
    await expect(page.locator('[data-wallet="evm"] [data-error-for="xpub"]').innerText()).resolves.toMatch(/\S/);
    const api = await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/evm`, key: store.keys.test.secretKey, payload: { xpub: 'xpub-not-really' } });
    await expect(text(page, '[data-wallet="evm"] [data-error-for="xpub"]')).resolves.toBe(api.body.error.message);

    await page.locator('[data-wallet="evm"] input[name="xpub"]').fill(evmXpub);
    await page.locator('[data-wallet="evm"] button:has-text("Register")').click();
    await page.waitForURL(/connected=evm$/);
    await expect(text(page, '[data-testid="first-address-evm"]')).resolves.toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    // The next few, to compare with the wallet's own list (the BIP-44 test vector's index 1 among them).
    const next = await page.locator('[data-testid="next-addresses-evm"] li code').allTextContents();
    expect(next).toHaveLength(4);
    expect(next[0]).toBe('0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0');
    await expect(text(page, '[data-wallet="tron"] .status')).resolves.toBe('Not connected');

    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('[data-wallet="evm"] button:has-text("Disconnect")').click();
    await page.waitForURL(/disconnected=evm$/);
    await expect(text(page, '[data-wallet="evm"] .status')).resolves.toBe('Not connected');
  });
});

describe('dashboard payment links', () => {
  it('creates a link through the form (with the API validation), lists it, filters and pages', async () => {
    const store = await stack.createStore('Links Shop');
    await connectAllRails(stack, store.clientId, 'test');
    const page = await signIn(store);
    await page.fill('#f-usdtAmount', '12.5');
    await page.click('button:has-text("Create link")');
    await expect(text(page, '[data-error-for="enabledRails"]')).resolves.toBe("Invalid 'enabledRails': enable at least one rail");

    await page.check('input[name="enabledRails"][value="USDT_BSC"]');
    await page.fill('#f-usdtAmount', '12.500');
    await page.fill('#f-description', 'Chapati <b>x4</b>');
    await page.fill('#f-merchantRef', 'order-77');
    await page.click('button:has-text("Create link")');
    await page.waitForURL(/\/dashboard\?created=pl_/);
    const id = new URL(page.url()).searchParams.get('created')!;
    const checkoutUrl = `${stack.baseUrl}/p/${id}`;
    await expect(page.getByTestId('created-link').getAttribute('href')).resolves.toBe(checkoutUrl);
    const row = page.locator(`tr[data-link="${id}"]`);
    await expect(row.innerText()).resolves.toMatch(/12\.5 USDT[\s\S]*BNB Smart Chain[\s\S]*order-77/);
    // Escaped, shown as typed.
    await expect(row.locator('small').innerText()).resolves.toBe('Chapati <b>x4</b>');
    await expect(row.locator('.status').innerText()).resolves.toBe('PENDING');
    const api = await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key: store.keys.test.secretKey });
    expect(api.body).toMatchObject({ usdtAmount: '12.5', enabledRails: ['USDT_BSC'], merchantRef: 'order-77', checkoutUrl });

    await page.selectOption('#status', 'CONFIRMED');
    await page.click('.filter button');
    await expect(text(page, '.empty')).resolves.toContain('No payment links with status CONFIRMED');

    for (let i = 0; i < 20; i++) {
      const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload: { usdtAmount: '1', enabledRails: ['USDT_TRON'] } });
      expect(res.status).toBe(201);
    }
    await page.goto(`${stack.baseUrl}/dashboard?status=PENDING`);
    await expect(page.locator('tr[data-link]').count()).resolves.toBe(20);
    await expect(text(page, '.pager')).resolves.toContain('Page 1 of 2 · 21 links');
    await page.click('a[rel="next"]');
    await expect(page.locator('tr[data-link]').count()).resolves.toBe(1);
    // The row opens the link's own page.
    await page.click(`tr[data-link="${id}"] a`);
    await page.waitForURL(`${stack.baseUrl}/dashboard/links/${id}`);
  });
});

describe('dashboard webhooks', () => {
  it('creates an endpoint showing its secret once, and lists its deliveries', async () => {
    const store = await stack.createStore('Hooks Shop');
    await connectAllRails(stack, store.clientId, 'test');
    const page = await signIn(store);
    await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
    await page.fill('#f-url', 'ftp://shop.example/hooks');
    await page.click('button:has-text("Add endpoint")');
    await expect(text(page, '[data-error-for="url"]')).resolves.toMatch(/^Invalid 'url': it /);

    await page.fill('#f-url', receiver.url('/dash-hooks'));
    await page.click('button:has-text("Add endpoint")');
    const secret = await text(page, '[data-testid="webhook-secret"]');
    expect(secret).toMatch(/^whsec_/);
    const endpointId = await page.locator('tr[data-endpoint]').getAttribute('data-endpoint');
    await page.goto(`${stack.baseUrl}/dashboard/webhooks`);
    await expect(text(page, `tr[data-endpoint="${endpointId}"]`)).resolves.toContain('enabled');
    expect(await page.content()).not.toContain(secret);

    const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload: { usdtAmount: '3', enabledRails: ['USDT_BSC'] } });
    await stack.request({ method: 'POST', url: `/v1/payment-links/${link.body.id}/simulate-payment`, key: store.keys.test.secretKey, payload: { rail: 'USDT_BSC' } });
    const [delivered] = await eventually(async () => (receiver.requestsTo('/dash-hooks').length ? receiver.requestsTo('/dash-hooks') : undefined), 'the webhook delivery');
    // The secret the dashboard showed is the one that signs deliveries.
    expect(new Webhook(secret).verify(delivered!.body, delivered!.headers as Record<string, string>)).toMatchObject({ type: 'payment_link.confirmed' });

    await page.click(`tr[data-endpoint="${endpointId}"] a:has-text("Deliveries")`);
    // The log row is written just after the receiver answers.
    await eventually(async () => {
      await page.reload();
      return (await page.locator('tr[data-delivery]').count()) > 0 ? true : undefined;
    }, 'the delivery in the log');
    await expect(text(page, 'tr[data-delivery]')).resolves.toMatch(/payment_link\.confirmed[\s\S]*succeeded[\s\S]*200/);
    expect(await page.content()).not.toContain(secret);
  });
});

describe('dashboard request forgery', () => {
  const walletCount = (storeId: string) =>
    stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM store_wallets WHERE store_id = ${storeId}`);

  it('refuses a POST without the CSRF token or from another origin, and a cross-site form carries no session', async () => {
    const store = await stack.createStore('Forgery Shop');
    const page = await signIn(store);
    await page.goto(`${stack.baseUrl}/dashboard/wallets`);
    const csrf = await page.locator('[data-wallet="evm"] input[name="csrf"]').inputValue();
    const post = (form: Record<string, string>, origin: string) =>
      page.request.post(`${stack.baseUrl}/dashboard/wallets/evm`, { form, headers: { origin }, maxRedirects: 0 });

    expect((await post({ xpub: evmXpub }, stack.baseUrl)).status()).toBe(403);
    expect((await post({ xpub: evmXpub, csrf: 'x'.repeat(csrf.length) }, stack.baseUrl)).status()).toBe(403);
    expect((await post({ xpub: evmXpub, csrf }, 'https://evil.example')).status()).toBe(403);
    expect(await walletCount(store.clientId)).toBe(0);

    // A page on another site that posts the form by itself: SameSite=Strict keeps the cookie home.
    const evil = await attackerSite(`<form method="post" action="${stack.baseUrl}/dashboard/wallets/evm">
      <input name="xpub" value="${evmXpub}"><input name="csrf" value="${csrf}"></form>
      <script>document.forms[0].submit()</script>`);
    try {
      await page.goto(evil.url);
      await page.waitForURL(`${stack.baseUrl}/dashboard/login`);
      expect(await walletCount(store.clientId)).toBe(0);
    } finally {
      evil.server.close();
    }

    // The same request from the dashboard's own origin with its token goes through.
    expect((await post({ xpub: evmXpub, csrf }, stack.baseUrl)).status()).toBe(303);
    expect(await walletCount(store.clientId)).toBe(1);
  });
});

/** Serves one HTML page on localhost (another site than 127.0.0.1). */
async function attackerSite(body: string): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}/`, server };
}
