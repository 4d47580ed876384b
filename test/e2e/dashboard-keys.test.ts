import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { freePort, launchBrowser } from '../helpers/browser.js';
import { dashboardUser, signInPage } from '../helpers/dashboard-users.js';
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

/** A fresh browser context whose every HTML answer is kept, to check what reached the browser. */
async function openPage(): Promise<{ page: Page; pages: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const pages: string[] = [];
  const page = await context.newPage();
  page.on('response', async (res) => {
    if ((res.headers()['content-type'] ?? '').startsWith('text/html')) pages.push(await res.text().catch(() => ''));
  });
  return { page, pages, close: () => context.close() };
}

describe('dashboard API keys', () => {
  it('rolls a key with a grace period, shows the new key once, then revokes the old key; the session is not the key’s', async () => {
    const store = await stack.createStore('Keys Cafe');
    const oldKey = store.keys.test.secretKey;
    const developer = await dashboardUser(stack, store, 'developer');
    const { page, pages, close } = await openPage();
    await signInPage(page, stack.baseUrl, developer);

    await page.click('nav >> text=API keys');
    await page.waitForURL(`${stack.baseUrl}/dashboard/keys`);
    const rows = page.locator('tr[data-key]');
    await expect(rows.count()).resolves.toBe(2);
    const secretRow = page.locator('tr[data-kind="secret"]');
    const oldId = (await secretRow.getAttribute('data-key'))!;
    await expect(secretRow.innerText()).resolves.toContain(`sk_test_…${oldKey.slice(-4)}`);
    // No key stands behind a dashboard session.
    await expect(page.locator('[data-testid="this-session"]').count()).resolves.toBe(0);

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
      expect(dialog.message()).toContain('stops working at once');
      void dialog.accept();
    });
    await page.locator(`tr[data-key="${oldId}"] button:has-text("Revoke")`).click();
    // Revoking a key signs nobody out: the dashboard stays open, the key is refused.
    await page.waitForURL(`${stack.baseUrl}/dashboard/keys?revoked=${oldId}`);
    await expect(page.locator('[role="status"]').innerText()).resolves.toContain('revoked');
    expect(await works(oldKey)).toBe(401);
    expect(await works(newKey)).toBe(200);
    await expect(page.locator(`tr[data-key="${oldId}"] .status`).innerText()).resolves.toBe('revoked');
    await expect(page.locator(`tr[data-key="${oldId}"] button`).count()).resolves.toBe(0);
    await page.goto(`${stack.baseUrl}/dashboard/keys`);
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/keys`);

    expect(pages.length).toBeGreaterThan(0);
    for (const html of pages) {
      expect(html).not.toContain(oldKey);
      expect(html).not.toContain(developer.password);
    }
    await close();
  });

  it('shows a viewer the keys without a form, and refuses a viewer’s revoke even with the page’s token', async () => {
    const store = await stack.createStore('Viewer Cafe');
    const viewer = await dashboardUser(stack, store, 'viewer');
    const { page, close } = await openPage();
    await signInPage(page, stack.baseUrl, viewer);
    await page.goto(`${stack.baseUrl}/dashboard/keys`);
    await expect(page.locator('tr[data-key]').count()).resolves.toBe(2);
    await expect(page.locator('form[action^="/dashboard/keys"]').count()).resolves.toBe(0);
    const id = (await page.locator('tr[data-kind="secret"]').getAttribute('data-key'))!;
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const refused = await page.request.post(`${stack.baseUrl}/dashboard/keys/${id}/revoke`, { form: { csrf }, headers: { origin: stack.baseUrl }, maxRedirects: 0 });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toContain('Not allowed');
    expect(await works(store.keys.test.secretKey)).toBe(200);
    await close();
  });
});
