import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import type { Role } from '../../domain/roles.js';
import { desktop, freePort, launchBrowser, saveScreenshot } from '../helpers/browser.js';
import { dashboardUser, signInHttp, signInPage } from '../helpers/dashboard-users.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { request as httpRequest } from 'node:http';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * The settings page in a real browser on the real stack: payment policy, default redirect URL,
 * store name and the checkout logo, through the same service as PUT …/settings; what the
 * checkout then shows; and who may change them.
 */
let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  const port = await freePort();
  stack = await startStack({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const contexts: BrowserContext[] = [];
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext(desktop);
  contexts.push(context);
  return context.newPage();
}

async function signedIn(store: CreatedStore, role: Role = 'owner'): Promise<Page> {
  const page = await newPage();
  // Removing the logo asks for confirmation (the page's script); accept it as a person would.
  page.on('dialog', (d) => void d.accept());
  await signInPage(page, stack.baseUrl, await dashboardUser(stack, store, role));
  await page.goto(`${stack.baseUrl}/dashboard/settings`);
  return page;
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();
const settingsOf = async (store: CreatedStore) =>
  (await stack.request({ method: 'GET', url: `/v1/merchant/clients/${store.clientId}/settings`, key: store.keys.test.secretKey })).body;
const logoRows = (store: CreatedStore) =>
  stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM store_logos WHERE store_id = ${store.clientId}`);

/** A real PNG: a green band with a lighter square, 160 × 48. */
function logoPng(): Buffer {
  const png = new PNG({ width: 160, height: 48 });
  for (let y = 0; y < 48; y++) {
    for (let x = 0; x < 160; x++) {
      const i = (y * 160 + x) * 4;
      const inner = x > 12 && x < 44 && y > 8 && y < 40;
      png.data[i] = inner ? 220 : 11;
      png.data[i + 1] = inner ? 252 : 110;
      png.data[i + 2] = inner ? 231 : 79;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

/** A multipart form (bytes as they are, which httpCall's string payloads would re-encode) with the session's cookie. */
function postLogo(cookie: string, csrf: string, file: Buffer): Promise<Pick<HttpResponse, 'status'>> {
  const boundary = '----malipo-test-boundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${csrf}\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="logo"; filename="l.png"\r\nContent-Type: image/png\r\n\r\n`),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return new Promise((resolve, reject) => {
    const r = httpRequest(new URL('/dashboard/settings/logo', stack.baseUrl), {
      method: 'POST',
      headers: { cookie, origin: stack.baseUrl, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    r.on('error', reject);
    r.end(body);
  });
}

async function fillSettings(page: Page, values: Record<string, string>) {
  for (const [name, value] of Object.entries(values)) await page.fill(`#f-${name}`, value);
  await page.click('button:has-text("Save settings")');
}

async function upload(page: Page, file: { name: string; mimeType: string; buffer: Buffer }) {
  await page.setInputFiles('#f-logo', file);
  await page.click('button:has-text("Upload logo")');
}

describe('dashboard settings', () => {
  it('saves the policy, default redirect URL and name, and refuses bad values next to the field, changing nothing', async () => {
    const store = await stack.createStore('Mama Mboga');
    const page = await signedIn(store);
    await fillSettings(page, { storeName: 'Mama Mboga Fresh', defaultRedirectUrl: 'https://shop.example.com/thanks', lateWatchMinutes: '120', underpaymentToleranceBps: '50' });
    await page.waitForURL(`${stack.baseUrl}/dashboard/settings?saved=1`);
    await expect(text(page, '.notice.ok')).resolves.toContain('Settings saved');
    await expect(text(page, '.brand')).resolves.toContain('Mama Mboga Fresh');
    const saved = { storeName: 'Mama Mboga Fresh', defaultRedirectUrl: 'https://shop.example.com/thanks', lateWatchMinutes: 120, underpaymentToleranceBps: 50, logoUrl: null };
    expect(await settingsOf(store)).toEqual(saved);

    const refusals: [string, Record<string, string>, string][] = [
      ['underpaymentToleranceBps', { underpaymentToleranceBps: '5000' }, 'expected number to be <=1000'],
      ['defaultRedirectUrl', { defaultRedirectUrl: 'http://shop.example.com/thanks' }, 'must start with https://'],
      ['defaultRedirectUrl', { defaultRedirectUrl: 'https://192.168.1.20/thanks' }, 'must name a public host, not 192.168.1.20, a private address'],
      ['defaultRedirectUrl', { defaultRedirectUrl: 'https://localhost/thanks' }, "'localhost' is an internal name"],
      ['lateWatchMinutes', { lateWatchMinutes: '12.5' }, "Invalid 'lateWatchMinutes'"],
      ['storeName', { storeName: '   ' }, "Invalid 'storeName'"],
    ];
    for (const [fieldName, bad, message] of refusals) {
      await page.goto(`${stack.baseUrl}/dashboard/settings`);
      // Another field changed in the same form is not saved either: all or nothing.
      const response = page.waitForResponse((r) => r.url() === `${stack.baseUrl}/dashboard/settings` && r.request().method() === 'POST');
      await fillSettings(page, { storeName: 'Should Not Stick', lateWatchMinutes: '60', ...bad });
      expect((await response).status()).toBe(400);
      await expect(text(page, `[data-error-for="${fieldName}"]`)).resolves.toContain(message);
      await expect(page.locator(`#f-${fieldName}`).getAttribute('aria-invalid')).resolves.toBe('true');
      // The refused value is shown again to be corrected.
      await expect(page.locator(`#f-${fieldName}`).inputValue()).resolves.toBe(Object.values(bad)[0]);
      expect(await settingsOf(store)).toEqual(saved);
    }

    // An empty redirect URL clears it.
    await page.goto(`${stack.baseUrl}/dashboard/settings`);
    await fillSettings(page, { defaultRedirectUrl: '' });
    await page.waitForURL(/saved=1/);
    expect((await settingsOf(store)).defaultRedirectUrl).toBeNull();
  });

  it('gives links created without redirectUrl the default of their environment, through the API as well', async () => {
    const store = await stack.createStore('Redirect Shop');
    await connectAllRails(stack, store.clientId, 'test');
    const key = store.keys.test.secretKey;
    const put = (payload: unknown) => stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/settings`, key, payload });
    const bad = await put({ defaultRedirectUrl: 'http://10.0.0.5/back' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: 'defaultRedirectUrl' });
    expect((await put({ defaultRedirectUrl: 'javascript:alert(1)' })).status).toBe(400);
    expect((await put({ defaultRedirectUrl: 'https://shop.example.com/back' })).body).toMatchObject({ defaultRedirectUrl: 'https://shop.example.com/back' });

    const create = (extra: Record<string, unknown> = {}) =>
      stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '2', enabledRails: ['USDT_BSC'], ...extra } });
    const plain = await create();
    expect(plain.status).toBe(201);
    expect(plain.body.redirectUrl).toBe('https://shop.example.com/back');
    const own = await create({ redirectUrl: 'https://elsewhere.example.org/done' });
    expect(own.body.redirectUrl).toBe('https://elsewhere.example.org/done');
    // The other environment keeps its own (none).
    await connectAllRails(stack, store.clientId, 'live');
    expect((await stack.request({ method: 'GET', url: `/v1/merchant/clients/${store.clientId}/settings`, key: store.keys.live.secretKey })).body.defaultRedirectUrl).toBeNull();
    // The checkout hands it to the customer.
    const view = await stack.request({ method: 'GET', url: `/v1/checkout/${plain.body.id}` });
    expect(view.body.redirectUrl).toBe('https://shop.example.com/back');
    // Cleared: links go back to having none.
    await put({ defaultRedirectUrl: null });
    expect((await create()).body.redirectUrl).toBeNull();
  });

  it('uploads a logo, refuses SVG and oversized files, and the checkout shows logo and name from our own origin', async () => {
    const store = await stack.createStore('Kibanda Brand');
    await connectAllRails(stack, store.clientId, 'test');
    const page = await signedIn(store);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><rect width="10" height="10"/></svg>');
    await upload(page, { name: 'logo.svg', mimeType: 'image/svg+xml', buffer: svg });
    await expect(text(page, '[data-error-for="logo"]')).resolves.toContain('SVG is not accepted');
    // Renaming it changes nothing: the bytes decide.
    await upload(page, { name: 'logo.png', mimeType: 'image/png', buffer: svg });
    await expect(text(page, '[data-error-for="logo"]')).resolves.toContain('SVG is not accepted');
    await upload(page, { name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('just some text, not an image') });
    await expect(text(page, '[data-error-for="logo"]')).resolves.toContain('not a PNG, JPEG or WebP');
    const big = Buffer.concat([logoPng(), Buffer.alloc(150 * 1024, 7)]);
    await upload(page, { name: 'big.png', mimeType: 'image/png', buffer: big });
    await expect(text(page, '[data-error-for="logo"]')).resolves.toContain('over 100 KB');
    expect(await logoRows(store)).toBe(0);

    const png = logoPng();
    await upload(page, { name: 'logo.png', mimeType: 'image/png', buffer: png });
    await page.waitForURL(`${stack.baseUrl}/dashboard/settings?logo=set`);
    const hash = createHash('sha256').update(png).digest('hex');
    const logoUrl = `${stack.baseUrl}/branding/logos/${hash}.png`;
    await expect(page.locator('[data-testid="current-logo"]').getAttribute('src')).resolves.toBe(logoUrl);
    expect((await settingsOf(store)).logoUrl).toBe(logoUrl);
    await saveScreenshot(page, 'dashboard/settings.png');

    // Served by us, as uploaded, cached for good under its hash, never sniffed.
    const served = await fetch(logoUrl);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    expect((await fetch(`${stack.baseUrl}/branding/logos/${hash}.jpg`)).status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/branding/logos/${'0'.repeat(64)}.png`)).status).toBe(404);

    const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload: { usdtAmount: '4.5', enabledRails: ['USDT_BSC'] } });
    const checkout = await newPage();
    const origins = new Set<string>();
    checkout.on('request', (r) => origins.add(new URL(r.url()).origin));
    const cspErrors: string[] = [];
    checkout.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text()); });
    await checkout.goto(link.body.checkoutUrl);
    const img = checkout.locator('[data-testid="store-logo"]');
    await expect(img.getAttribute('src')).resolves.toBe(logoUrl);
    await expect(img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth)).resolves.toBe(160);
    await expect(text(checkout, 'h1')).resolves.toContain('Kibanda Brand');
    expect([...origins]).toEqual([stack.baseUrl]);
    expect(cspErrors).toEqual([]);
    await saveScreenshot(checkout, 'dashboard/checkout-branding.png');

    await page.click('button:has-text("Remove logo")');
    await page.waitForURL(/logo=removed/);
    expect(await logoRows(store)).toBe(0);
  });

  it('shows a viewer the settings without forms, and refuses a forged POST by a viewer or developer with a 403 that changes nothing', async () => {
    const store = await stack.createStore('Owners Only');
    const viewerPage = await signedIn(store, 'viewer');
    await expect(text(viewerPage, '[data-testid="settings-facts"]')).resolves.toContain('Owners Only');
    await expect(viewerPage.locator('main form, main button, main input').count()).resolves.toBe(0);
    const before = await settingsOf(store);

    for (const role of ['viewer', 'developer'] as const) {
      const { cookie, csrf } = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, role));
      const form = await httpCall(stack.baseUrl, {
        method: 'POST', url: '/dashboard/settings', headers: { cookie, origin: stack.baseUrl, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ csrf, storeName: 'Taken Over', underpaymentToleranceBps: '1000', lateWatchMinutes: '1', defaultRedirectUrl: 'https://evil.example.com/' }).toString(),
      });
      expect({ role, status: form.status }).toEqual({ role, status: 403 });
      expect(form.text).toContain('Nothing was changed');
      const logo = await postLogo(cookie, csrf, logoPng());
      expect({ role, status: logo.status }).toEqual({ role, status: 403 });
    }
    expect(await settingsOf(store)).toEqual(before);
    expect(await logoRows(store)).toBe(0);

    // The same multipart request from an owner is accepted: the 403s above were the role.
    const { cookie, csrf } = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'owner'));
    const ok = await postLogo(cookie, csrf, logoPng());
    expect(ok.status).toBe(303);
    expect(await logoRows(store)).toBe(1);
  });
});
