import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { freePort, launchBrowser } from '../helpers/browser.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** The dashboard's API keys page in Chromium: roll with a grace period, then revoke. */
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

const works = async (key: string) => (await stack.request({ method: 'GET', url: '/v1/keys', key })).status;

describe('dashboard API keys', () => {
  it('rolls the signed-in key with a grace period, shows the new key once, then revokes the old key and signs out', async () => {
    const store = await stack.createStore('Keys Cafe');
    const oldKey = store.keys.test.secretKey;
    const context = await browser.newContext();
    const pages: string[] = [];
    const page: Page = await context.newPage();
    page.on('response', async (res) => {
      if ((res.headers()['content-type'] ?? '').startsWith('text/html')) pages.push(await res.text().catch(() => ''));
    });
    await page.goto(`${stack.baseUrl}/dashboard/login`);
    await page.fill('#f-secretKey', oldKey);
    await page.click('button:has-text("Sign in")');
    await page.waitForURL(`${stack.baseUrl}/dashboard`);

    await page.click('nav >> text=API keys');
    await page.waitForURL(`${stack.baseUrl}/dashboard/keys`);
    const rows = page.locator('tr[data-key]');
    await expect(rows.count()).resolves.toBe(2);
    const secretRow = page.locator('tr[data-kind="secret"]');
    const oldId = (await secretRow.getAttribute('data-key'))!;
    await expect(secretRow.innerText()).resolves.toContain(`sk_test_…${oldKey.slice(-4)}`);
    await expect(secretRow.locator('[data-testid="this-session"]').count()).resolves.toBe(1);

    // A revoke posted without the page's CSRF token changes nothing.
    const forged = await page.request.post(`${stack.baseUrl}/dashboard/keys/${oldId}/revoke`, {
      form: { confirmSelfRevoke: 'true' }, headers: { origin: stack.baseUrl }, maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await works(oldKey)).toBe(200);

    // A bad grace period gets the API's message next to the field.
    await secretRow.locator('input[name="graceHours"]').fill('500');
    await secretRow.locator('button:has-text("Roll")').click();
    await expect(page.locator(`[data-error-for="graceHours"]`).innerText()).resolves.toContain('graceHours');

    await page.locator(`tr[data-key="${oldId}"] input[name="graceHours"]`).fill('1');
    await page.locator(`tr[data-key="${oldId}"] button:has-text("Roll")`).click();
    const newKey = await page.getByTestId('new-key').innerText();
    expect(newKey).toMatch(/^sk_test_[0-9a-z]{40}$/);
    await expect(page.locator('[role="status"]').innerText()).resolves.toContain('keeps working until');
    await expect(page.locator(`tr[data-key="${oldId}"] .status`).innerText()).resolves.toBe('expiring');
    expect(await works(newKey)).toBe(200);
    expect(await works(oldKey)).toBe(200);

    // The new key is shown once: the list page never shows it again.
    await page.goto(`${stack.baseUrl}/dashboard/keys`);
    await expect(page.content()).resolves.not.toContain(newKey);

    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain('sign you out');
      void dialog.accept();
    });
    await page.locator(`tr[data-key="${oldId}"] button:has-text("Revoke")`).click();
    await page.waitForURL(`${stack.baseUrl}/dashboard/login?keyRevoked=1`);
    await expect(page.locator('[role="status"]').innerText()).resolves.toContain('revoked');
    expect(await works(oldKey)).toBe(401);
    await page.goto(`${stack.baseUrl}/dashboard/keys`);
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/login`);

    await page.fill('#f-secretKey', newKey);
    await page.click('button:has-text("Sign in")');
    await page.waitForURL(`${stack.baseUrl}/dashboard`);
    await page.goto(`${stack.baseUrl}/dashboard/keys`);
    await expect(page.locator(`tr[data-key="${oldId}"] .status`).innerText()).resolves.toBe('revoked');
    await expect(page.locator(`tr[data-key="${oldId}"] button`).count()).resolves.toBe(0);

    expect(pages.length).toBeGreaterThan(0);
    for (const html of pages) expect(html).not.toContain(oldKey);
    await context.close();
  });
});
