import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { freePort, launchBrowser } from '../helpers/browser.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** The API reference page (Redoc, served by the app) in a real browser. */
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

describe('GET /docs', () => {
  it('renders every operation from the served document and asks no other host for anything', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const failed = new Map<string, string>();
    page.on('request', (r) => requested.push(r.url()));
    page.on('requestfailed', (r) => failed.set(r.url(), r.failure()?.errorText ?? ''));
    await page.goto(`${stack.baseUrl}/docs`);
    const doc = (await stack.request({ method: 'GET', url: '/v1/openapi.json' })).body as { paths: Record<string, Record<string, { summary: string }>> };
    // Each operation is a section with its summary as the heading.
    await page.locator('h2', { hasText: 'Create a payment link (environment from the key)' }).waitFor({ timeout: 30_000 });
    const headings = await page.locator('h2').allInnerTexts();
    const summaries = Object.values(doc.paths).flatMap((m) => Object.values(m).map((op) => op.summary));
    expect(summaries.length).toBeGreaterThan(30);
    for (const summary of summaries) expect(headings).toContain(summary);
    expect(await page.locator('#reference').innerText()).toContain('/v1/payment-links');
    const origin = new URL(page.url()).origin;
    expect(requested.filter((u) => u.startsWith(origin)).length).toBeGreaterThan(3);
    // The one thing Redoc asks for elsewhere (its logo, from its CDN) is refused by the page's
    // Content-Security-Policy inside the browser: it never reaches the network.
    const elsewhere = requested.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));
    expect(elsewhere.map((u) => [u, failed.get(u)])).toEqual(elsewhere.map((u) => [u, 'csp']));
    await page.close();
  });

  it('serves the Redoc bundle from the app, cacheable for a year', async () => {
    const html = (await stack.request({ method: 'GET', url: '/docs' })).text;
    const bundle = /<script src="(\/docs\/redoc\/[^"]+)"/.exec(html)![1]!;
    const res = await stack.request({ method: 'GET', url: bundle });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers.etag).toBeTruthy();
    expect((await stack.request({ method: 'GET', url: bundle.replace('redoc.standalone.js', 'redoc.standalone.js.map') })).status).toBe(404);
  });
});
