import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import type { CreatedStore } from '../../db/store-repo.js';
import { chooseRail, freePort, launchBrowser } from '../helpers/browser.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** The hosted checkout in a real browser (Debian Chromium driven by playwright-core). */
let stack: Stack;
let store: CreatedStore;
let browser: Browser;

beforeAll(async () => {
  const port = await freePort();
  stack = await startStack({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  store = await stack.createStore('Mama Mboga Ltd');
  await connectAllRails(stack, store.clientId, 'test');
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function createLink(payload: Record<string, unknown>) {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload });
  expect(res.status).toBe(201);
  return res.body;
}

describe('hosted checkout /p/:id', () => {
  it('shows the rails, the address with its QR code, and turns to "Payment received" when paid', async () => {
    const link = await createLink({
      usdtAmount: '12.5',
      enabledRails: ['MOBILE_MONEY', 'USDT_BSC', 'USDT_TRON'],
      description: 'Sukuma wiki x3',
      redirectUrl: 'https://shop.example/thanks',
    });
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (r) => failed.push(r.url()));
    await page.goto(link.checkoutUrl);
    await expect(page.locator('h1').textContent()).resolves.toBe('Pay Mama Mboga Ltd');
    await expect(page.getByText('Test mode: no real money moves').isVisible()).resolves.toBe(true);
    await expect(page.locator('[data-rail]').count()).resolves.toBe(3);

    await chooseRail(page, 'USDT_BSC');
    await expect(page.getByTestId('address').textContent()).resolves.toBe(link.bscAddress);
    await expect(page.getByTestId('amount').textContent()).resolves.toBe('12.5 USDT');
    const qrLoaded = await page.locator('img.qr').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0);
    expect(qrLoaded).toBe(true);

    await chooseRail(page, 'MOBILE_MONEY');
    await expect(page.getByTestId('amount').textContent()).resolves.toBe('KES 1,625');
    await page.fill('#phone', '0712');
    await page.click('button[type=submit]');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('2547XXXXXXXX');

    await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/simulate-payment`, key: store.keys.test.secretKey, payload: { rail: 'USDT_BSC' } });
    await page.getByTestId('final-state').waitFor({ timeout: 15_000 });
    await expect(page.getByTestId('final-state').textContent()).resolves.toContain('Payment received');
    await expect(page.getByRole('link', { name: 'Back to Mama Mboga Ltd' }).getAttribute('href')).resolves.toBe('https://shop.example/thanks');
    expect(failed).toEqual([]);
    await page.close();
  });

  it('shows a link confirmed by M-Pesa with the KES amount paid and the M-Pesa receipt, not a USDT amount', async () => {
    const link = await createLink({ usdtAmount: '10', enabledRails: ['MOBILE_MONEY', 'USDT_BSC'] });
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/simulate-payment`, key: store.keys.test.secretKey, payload: { rail: 'MOBILE_MONEY' } });
    expect(paid.body).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'MOBILE_MONEY' });
    const receipt = paid.body.externalId as string;
    expect(receipt).toMatch(/^SIM/);
    const page = await browser.newPage();
    await page.goto(link.checkoutUrl);
    await expect(page.getByTestId('final-state').textContent()).resolves.toContain('Payment received');
    await expect(page.getByTestId('amount').textContent()).resolves.toBe('KES 1,300');
    await expect(page.getByTestId('paid-amount').textContent()).resolves.toBe('Paid KES 1,300 by M-Pesa');
    await expect(page.getByTestId('receipt').textContent()).resolves.toBe(`M-Pesa receipt ${receipt}`);
    expect(await page.locator('main').textContent()).not.toContain('USDT');
    await page.close();
  });

  it('offers a rail with no test token as simulated only: a visible note, no address or QR code, and simulate-payment pays it', async () => {
    const link = await createLink({ usdtAmount: '3', enabledRails: ['USDT_SOL', 'USDT_POLYGON'] });
    expect(link.simulatedOnlyRails).toEqual(['USDT_SOL', 'USDT_POLYGON']);
    expect(link.solanaPayUrl).toBeNull();
    const page = await browser.newPage();
    await page.goto(link.checkoutUrl);
    for (const rail of ['USDT_SOL', 'USDT_POLYGON']) {
      await chooseRail(page, rail);
      await expect(page.getByTestId('simulated-only').textContent()).resolves.toContain('simulated only');
      await expect(page.locator('img.qr').count()).resolves.toBe(0);
      await expect(page.getByTestId('address').count()).resolves.toBe(0);
    }
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/simulate-payment`, key: store.keys.test.secretKey, payload: { rail: 'USDT_POLYGON' } });
    expect(paid.body).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'USDT_POLYGON', simulated: true });
    await page.getByTestId('final-state').waitFor({ timeout: 15_000 });
    await page.close();
  });

  it('shows a cancelled link as closed and an unknown link as not found', async () => {
    const link = await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] });
    await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/cancel`, key: store.keys.test.secretKey });
    const page = await browser.newPage();
    await page.goto(link.checkoutUrl);
    await expect(page.getByTestId('final-state').textContent()).resolves.toContain('cancelled');
    const res = await page.goto(`${stack.baseUrl}/p/pl_000000000000000000000000`);
    expect(res?.status()).toBe(404);
    await expect(page.locator('h1').textContent()).resolves.toBe('Payment link not found');
    await page.close();
  });
});
