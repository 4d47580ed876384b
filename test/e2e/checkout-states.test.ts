import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import type { Address } from 'viem';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { RateService } from '../../services/rates/rate-service.js';
import { createPaymentLink } from '../../services/payment-links/payment-links.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { axeViolations, chooseRail, decodeQrPng, desktop, freePort, launchBrowser, phone, saveScreenshot } from '../helpers/browser.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * Every state of the hosted checkout in Debian's Chromium, on a phone and a desktop: M-Pesa
 * through the Daraja emulator, USDT on anvil (playing BSC, depth 3), expiry, Swahili, no
 * JavaScript, accessibility (axe-core) and the page's weight. Screenshots go to artifacts/checkout/.
 */
const merchant = sandboxPaybill('checkout-ui');
let daraja: DarajaEmulator;
let anvil: Anvil;
let usdt: TestToken;
let payer: Address;
let stack: Stack;
let store: CreatedStore;
let browser: Browser;
let phoneSeq = 300;
const nextPhone = () => `07${String(++phoneSeq).padStart(8, '0')}`;
const msisdn = (local: string) => `254${local.slice(1)}`;

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  payer = anvil.accounts[1]!;
  await usdt.mint(payer, 10n ** 30n);
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  const port = await freePort();
  stack = await startStack({
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    MPESA_SANDBOX_URL: daraja.url,
    ENCRYPTION_KEY: formatKeyEntry(generateKey()),
    CHAIN_WATCHERS: 'on',
    CHAIN_POLL_MS: '100',
    RPC_URL_USDT_BSC_TEST: anvil.url,
    USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
    CONFIRMATIONS_USDT_BSC: '3',
  });
  store = await stack.createStore('Mama Mboga Ltd');
  const key = store.keys.test.secretKey;
  const connected = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) });
  expect(connected.status).toBe(200);
  await connectAllRails(stack, store.clientId, 'test');
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await daraja?.close();
  await anvil?.stop();
});

async function createLink(payload: Record<string, unknown>) {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys.test.secretKey, payload });
  expect(res.status).toBe(201);
  return res.body as { id: string; checkoutUrl: string; bscAddress: string };
}

const contexts: BrowserContext[] = [];
async function open(url: string, device: BrowserContextOptions = phone, extra: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ ...device, bypassCSP: true, locale: 'en-KE', ...extra });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(url);
  return page;
}
/** Runs an action that loads a new document (a link, a form post) and waits until it has loaded. */
async function loadedAfter(page: Page, action: () => Promise<void>): Promise<void> {
  const loaded = page.waitForEvent('load');
  await action();
  await loaded;
}

// A page left open keeps polling: each test closes what it opened.
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close().catch(() => undefined);
});

/** No serious or critical accessibility problem on the page as it is now. */
async function expectAccessible(page: Page) {
  const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious).toEqual([]);
}

/** Moves the page's installed clock on by `ms`, a second at a time, letting each second's fetches land. */
async function advance(page: Page, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 1000) {
    await page.clock.fastForward(Math.min(1000, ms - done));
    await page.waitForTimeout(100);
  }
}

/**
 * The text of the page's QR code. The page's poll may swap the panel in at any moment (the first
 * poll after loading always does), detaching the image under the screenshot: then it is read again.
 */
async function qrCode(page: Page): Promise<string | null> {
  const read = await eventually(async () => {
    try {
      await page.locator('img.qr').evaluate((img: HTMLImageElement) => img.decode());
      return { text: decodeQrPng(await page.locator('img.qr').screenshot()) };
    } catch (err) {
      if (/not attached|detached/i.test(String(err))) return undefined;
      throw err;
    }
  }, 'a QR code that stays on the page while it is read', 15_000);
  return read.text;
}

const stateOf = (page: Page) => page.locator('main').getAttribute('data-state');
const waitForState = (page: Page, state: string, timeout = 30_000) => page.waitForSelector(`main[data-state="${state}"]`, { timeout });
const usdt18 = (n: bigint) => n * 10n ** 18n;
const mine = (blocks: number) => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
const promptFor = (local: string) => eventually(async () => daraja.state.openPromptFor(msisdn(local)), 'the prompt at Daraja', 15_000);

describe('M-Pesa at checkout', () => {
  for (const [name, device] of [['phone', phone], ['desktop', desktop]] as const) {
    it(`pays: sending, check your phone, receipt (${name})`, async () => {
      const link = await createLink({ usdtAmount: '10', enabledRails: ['MOBILE_MONEY', 'USDT_BSC'], redirectUrl: 'https://shop.example/thanks' });
      const page = await open(link.checkoutUrl, device);
      await saveScreenshot(page, `checkout/${name}-1-choose.png`);
      await expectAccessible(page);
      await chooseRail(page, 'MOBILE_MONEY');
      await expect(page.getByTestId('amount').textContent()).resolves.toBe('KES 1,300');
      await saveScreenshot(page, `checkout/${name}-2-mpesa-form.png`);
      await expectAccessible(page);
      const local = nextPhone();
      await page.fill('#phone', local.replace(/(\d{4})(\d{3})(\d{3})/, '$1 $2 $3'));
      await page.click('button[type=submit]');
      await waitForState(page, 'mpesa-waiting');
      await expect(page.locator('#state-title').textContent()).resolves.toBe('Check your phone');
      await expect(page.locator('main').textContent()).resolves.toContain(`the phone ending ${local.slice(-3)}`);
      // The live region said so (the page clears it, then fills it 50 ms on, so screen readers
      // speak it again), and focus moved to the new state's title.
      await page.waitForFunction(() => document.getElementById('announce')?.textContent !== '', undefined, { timeout: 5_000 });
      await expect(page.locator('#announce').textContent()).resolves.toBe('Check your phone');
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('state-title');
      await saveScreenshot(page, `checkout/${name}-3-check-your-phone.png`);
      await expectAccessible(page);

      // A reload at this stage shows the same state from the server alone.
      await page.reload();
      await expect(stateOf(page)).resolves.toBe('mpesa-waiting');

      const prompt = await promptFor(local);
      await daraja.complete(prompt.checkoutRequestId, 'success');
      await waitForState(page, 'confirmed');
      await expect(page.getByTestId('paid-amount').textContent()).resolves.toBe('Paid KES 1,300 by M-Pesa');
      await expect(page.getByTestId('receipt-reference').textContent()).resolves.toMatch(/^[A-Z0-9]{10}$/);
      await expect(page.getByRole('link', { name: 'Back to Mama Mboga Ltd' }).getAttribute('href')).resolves.toBe('https://shop.example/thanks');
      await saveScreenshot(page, `checkout/${name}-4-mpesa-paid.png`);
      await expectAccessible(page);
    });
  }

  it('says why in plain words when the customer cancels, and a retry pays', async () => {
    const link = await createLink({ usdtAmount: '2', enabledRails: ['MOBILE_MONEY'] });
    const page = await open(link.checkoutUrl);
    const first = nextPhone();
    await page.fill('#phone', first);
    await page.click('button[type=submit]');
    await waitForState(page, 'mpesa-waiting');
    await daraja.complete((await promptFor(first)).checkoutRequestId, 'cancelled');
    await waitForState(page, 'mpesa-failed');
    await expect(page.getByTestId('mpesa-failure').textContent()).resolves.toBe('You cancelled the prompt on your phone.');
    await saveScreenshot(page, 'checkout/phone-5-mpesa-cancelled.png');
    await expectAccessible(page);
    const second = nextPhone();
    await page.fill('#phone', second);
    await page.click('button[type=submit]');
    await waitForState(page, 'mpesa-waiting');
    await daraja.complete((await promptFor(second)).checkoutRequestId, 'success');
    await waitForState(page, 'confirmed');
  });

  it('refuses a bad number in the customer\'s words before anything is sent', async () => {
    const link = await createLink({ usdtAmount: '2', enabledRails: ['MOBILE_MONEY'] });
    const page = await open(link.checkoutUrl);
    await page.fill('#phone', '0712');
    await page.click('button[type=submit]');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('2547XXXXXXXX');
    await expect(page.locator('#phone').getAttribute('aria-invalid')).resolves.toBe('true');
    await saveScreenshot(page, 'checkout/phone-6-mpesa-bad-number.png');
    await expectAccessible(page);
  });
});

describe('USDT on a local chain (anvil as BSC, depth 3)', () => {
  it('puts an EIP-681 transfer in the QR code, then shows the deposit counting up to its depth, then the receipt', async () => {
    const link = await createLink({ usdtAmount: '12.5', enabledRails: ['USDT_BSC', 'USDT_TRON'], merchantRef: 'order-secret-1', metadata: { note: 'private' } });
    const page = await open(link.checkoutUrl);
    await chooseRail(page, 'USDT_BSC');
    const expected = `ethereum:${usdt.address}@${anvil.chainId}/transfer?address=${link.bscAddress}&uint256=12500000000000000000`;
    expect(await qrCode(page)).toBe(expected);
    await expect(page.locator('img.qr').getAttribute('alt')).resolves.toBe(`QR code for your wallet. It holds: ${expected}`);
    await expect(page.getByTestId('open-wallet').getAttribute('href')).resolves.toBe(expected);
    await expect(page.getByTestId('address').textContent()).resolves.toBe(link.bscAddress);
    await saveScreenshot(page, 'checkout/phone-7-usdt-bsc.png');
    await expectAccessible(page);

    await chooseRail(page, 'USDT_TRON');
    const tron = await page.getByTestId('address').textContent();
    expect(await qrCode(page)).toBe(tron);
    await expect(page.getByTestId('open-wallet').count()).resolves.toBe(0);
    await expect(page.locator('main').textContent()).resolves.toContain('type the amount yourself');
    await saveScreenshot(page, 'checkout/phone-8-usdt-tron.png');

    const tx = await usdt.transfer(payer, link.bscAddress as Address, usdt18(125n) / 10n);
    await waitForState(page, 'seen');
    await expect(page.getByTestId('state').textContent()).resolves.toMatch(/We saw 12\.5 USDT on BNB Smart Chain\. Confirmations: [12] of 3\./);
    await saveScreenshot(page, 'checkout/phone-9-usdt-seen.png');
    // The public JSON the page polls: the deposit's progress, and nothing the merchant keeps for itself.
    const polled = (await stack.request({ method: 'GET', url: `/v1/checkout/${link.id}` })).body;
    expect(polled.deposit).toMatchObject({ rail: 'USDT_BSC', amount: '12.5', txHash: tx, requiredConfirmations: 3 });
    expect(polled.rails.find((r: { network: string }) => r.network === 'USDT_BSC')).toMatchObject({ payUri: expected, chainId: anvil.chainId, tokenContract: usdt.address });
    for (const hidden of ['merchantRef', 'metadata', 'payer', 'addressIndex', 'payments']) expect(polled).not.toHaveProperty(hidden);
    await expectAccessible(page);
    await page.reload();
    await expect(stateOf(page)).resolves.toBe('seen');
    await mine(3);
    await waitForState(page, 'confirmed');
    await expect(page.getByTestId('receipt-reference').textContent()).resolves.toBe(tx);
    await expect(page.getByTestId('receipt-amount').textContent()).resolves.toBe('12.5 USDT');
    await saveScreenshot(page, 'checkout/phone-10-usdt-paid.png');
    await expectAccessible(page);
  });

  it('asks an underpaying customer for the rest at the same address, in the QR code too, then confirms the top-up', async () => {
    const link = await createLink({ usdtAmount: '10', enabledRails: ['USDT_BSC'] });
    const page = await open(link.checkoutUrl);
    await usdt.transfer(payer, link.bscAddress as Address, usdt18(4n));
    await mine(3);
    await waitForState(page, 'underpaid');
    await expect(page.getByTestId('underpaid').textContent()).resolves.toBe('Received 4 USDT. Still to pay: 6 USDT. Send the rest to the same address.');
    await expect(page.getByTestId('address').textContent()).resolves.toBe(link.bscAddress);
    expect(await qrCode(page)).toBe(`ethereum:${usdt.address}@${anvil.chainId}/transfer?address=${link.bscAddress}&uint256=6000000000000000000`);
    await saveScreenshot(page, 'checkout/phone-11-underpaid.png');
    await expectAccessible(page);
    await usdt.transfer(payer, link.bscAddress as Address, usdt18(6n));
    await mine(3);
    await waitForState(page, 'confirmed');
    await expect(page.getByTestId('receipt-amount').textContent()).resolves.toBe('10 USDT');
  });
});

describe('the other states, languages and constraints', () => {
  it('counts down, then shows an expired link and what to do if the customer paid anyway', async () => {
    const deps = { config: stack.config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: undefined as never, rates: new RateService({ testKesPerUsdt: '130', sources: [] }) };
    const auth = { kind: 'secret' as const, storeId: store.clientId, storeName: 'Mama Mboga Ltd', environment: 'test' as const, keyId: '' };
    const link = await createPaymentLink(deps, auth, { usdtAmount: '1', enabledRails: ['USDT_BSC'], expiresInMinutes: 0.1 });
    const page = await open(link.checkoutUrl);
    const first = await page.locator('[data-countdown]').textContent();
    expect(first).toMatch(/^Time left to pay: 0:0\d$/);
    await page.waitForFunction((before) => document.querySelector('[data-countdown]')?.textContent !== before, first);
    await waitForState(page, 'expired', 40_000);
    await expect(page.getByTestId('final-state').textContent()).resolves.toContain('Already sent a payment?');
    await saveScreenshot(page, 'checkout/phone-12-expired.png');
    await expectAccessible(page);
  });

  it('shows a cancelled link as closed', async () => {
    const link = await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] });
    await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/cancel`, key: store.keys.test.secretKey });
    const page = await open(link.checkoutUrl);
    await expect(stateOf(page)).resolves.toBe('cancelled');
    await saveScreenshot(page, 'checkout/phone-13-cancelled.png');
    await expectAccessible(page);
  });

  it('speaks Swahili to a Swahili browser, and remembers a switch to English', async () => {
    const link = await createLink({ usdtAmount: '1250.5', enabledRails: ['MOBILE_MONEY', 'USDT_BSC'] });
    const page = await open(`${link.checkoutUrl}?rail=USDT_BSC`, phone, { locale: 'sw-KE' });
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('sw');
    await expect(page.locator('h1').textContent()).resolves.toBe('Lipa Mama Mboga Ltd');
    await expect(page.getByTestId('amount').textContent()).resolves.toBe('1,250.5 USDT');
    await expect(page.locator('main').textContent()).resolves.toContain('Tuma USDT ya BNB Smart Chain pekee');
    await saveScreenshot(page, 'checkout/phone-14-swahili-usdt.png');
    await expectAccessible(page);
    await chooseRail(page, 'MOBILE_MONEY');
    await page.fill('#phone', '12');
    await page.click('button[type=submit]');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Andika nambari yako ya M-Pesa');
    await saveScreenshot(page, 'checkout/phone-15-swahili-mpesa.png');
    await loadedAfter(page, () => page.click('nav.lang a[hreflang="en"]'));
    await expect(page.locator('h1').textContent()).resolves.toBe('Pay Mama Mboga Ltd');
    await page.goto(link.checkoutUrl);
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('en');
  });

  it('works with JavaScript off: amount, address, QR, and the M-Pesa form posts', async () => {
    const link = await createLink({ usdtAmount: '3', enabledRails: ['MOBILE_MONEY', 'USDT_BSC'] });
    const page = await open(`${link.checkoutUrl}?rail=USDT_BSC`, phone, { javaScriptEnabled: false });
    await expect(page.getByTestId('amount').textContent()).resolves.toBe('3 USDT');
    await expect(page.getByTestId('address').textContent()).resolves.toBe(link.bscAddress);
    expect(await qrCode(page)).toContain(`address=${link.bscAddress}&uint256=3000000000000000000`);
    await saveScreenshot(page, 'checkout/phone-16-nojs-usdt.png');
    await chooseRail(page, 'MOBILE_MONEY');
    await page.fill('#phone', '0712');
    await loadedAfter(page, () => page.click('button[type=submit]'));
    await expect(page.locator('#phone-error').textContent()).resolves.toContain('2547XXXXXXXX');
    const local = nextPhone();
    await page.fill('#phone', local);
    await loadedAfter(page, () => page.click('button[type=submit]'));
    await expect(stateOf(page)).resolves.toBe('mpesa-waiting');
    await saveScreenshot(page, 'checkout/phone-17-nojs-check-phone.png');
    await daraja.complete((await promptFor(local)).checkoutRequestId, 'success');
    await eventually(async () => {
      await page.reload();
      return (await stateOf(page)) === 'confirmed' || undefined;
    }, 'confirmed after a reload', 20_000);
  });

  it('loads under 100 KB, all from its own server, and polls less while the tab is hidden', async () => {
    const link = await createLink({ usdtAmount: '5', enabledRails: ['MOBILE_MONEY', 'USDT_BSC', 'USDT_TRON', 'USDT_ETH'] });
    const context = await browser.newContext({ ...phone, locale: 'en-KE' });
    contexts.push(context);
    // The page's clock is moved on by hand (timers only: each poll's fetch is real), not waited for.
    await context.clock.install();
    const page = await context.newPage();
    const sizes: { url: string; bytes: number }[] = [];
    const polls: number[] = [];
    page.on('response', async (res) => {
      const body = await res.body().catch(() => Buffer.alloc(0));
      sizes.push({ url: res.url(), bytes: body.length + JSON.stringify(res.headers()).length });
    });
    page.on('request', (req) => {
      if (req.url().includes('/v1/checkout/')) polls.push(Date.now());
    });
    await page.goto(link.checkoutUrl);
    await chooseRail(page, 'USDT_BSC');
    expect(await qrCode(page)).toContain(link.bscAddress);
    await advance(page, 4_500);
    const total = sizes.reduce((n, s) => n + s.bytes, 0);
    console.log(`checkout weight: ${total} bytes in ${sizes.length} responses\n${sizes.map((s) => `  ${s.bytes}\t${s.url}`).join('\n')}`);
    expect(total).toBeLessThan(100 * 1024);
    expect(sizes.every((s) => s.url.startsWith(stack.baseUrl))).toBe(true);

    await page.evaluate(() => {
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    const hiddenFrom = Date.now();
    await advance(page, 20_000); // 5 polls at the visible tab's 4 s
    const hiddenPolls = polls.filter((t) => t >= hiddenFrom).length;
    expect(hiddenPolls).toBeLessThanOrEqual(3);
    await page.evaluate(() => {
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
      document.dispatchEvent(new Event('visibilitychange'));
    });
    const shownAt = Date.now();
    await eventually(async () => polls.some((t) => t >= shownAt) || undefined, 'a poll as soon as the tab is seen again', 2_000);
  }, 60_000);

  it('answers the M-Pesa form for an id that is no link id (a NUL, a wrong prefix) with the not-found page, never a 500', async () => {
    const post = (id: string) => fetch(`${stack.baseUrl}/p/${id}/pay/mobile-money`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `phoneNumber=${msisdn(nextPhone())}`,
    });
    for (const id of ['%00', 'pl_%00', `pl_${'A'.repeat(24)}`, 'x'.repeat(90)]) {
      const res = await post(id);
      expect({ id, status: res.status, type: res.headers.get('content-type') }).toEqual({ id, status: 404, type: 'text/html; charset=utf-8' });
    }
    // Longer than any route parameter: the router refuses it with the documented error body.
    expect((await post('x'.repeat(300))).status).toBe(404);
  });

  it('refuses the M-Pesa form from another site, and counts it in the JSON route\'s rate limit', async () => {
    const link = await createLink({ usdtAmount: '2', enabledRails: ['MOBILE_MONEY'] });
    const form = (headers: Record<string, string> = {}) =>
      fetch(`${stack.baseUrl}/p/${link.id}/pay/mobile-money`, {
        method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: `phoneNumber=${msisdn(nextPhone())}`,
      });
    const before = daraja.state.prompts.size;
    const hostile: Record<string, string>[] = [{ origin: 'https://evil.example' }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const headers of hostile) {
      expect({ headers, status: (await form(headers)).status }).toEqual({ headers, status: 403 });
    }
    expect(daraja.state.prompts.size).toBe(before);
    // Spend the rest of this IP's budget on the JSON route with numbers it refuses (no phone rings).
    let json: Response | undefined;
    for (let i = 0; i < 12 && json?.status !== 429; i++) {
      json = await fetch(`${stack.baseUrl}/v1/checkout/${link.id}/pay/mobile-money`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"phoneNumber":"1"}' });
    }
    expect(json?.status).toBe(429);
    const limited = await form();
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.text()).toContain('Too many attempts from this network');
    expect(daraja.state.prompts.size).toBe(before);
  });
});
