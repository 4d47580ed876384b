import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { decodeQrPng, launchBrowser, phone } from '../helpers/browser.js';
import { connectBody, sandboxPaybill, sandboxTill } from '../helpers/daraja.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * The checkout's "No prompt? Pay from the M-Pesa menu" block (issue 29 item 7): the paybill, the
 * link's account number and the KES still due, server-rendered in English and Swahili, only where
 * Daraja took the store's C2B URLs, only while the link is open; then a payment made from the menu
 * with that account number (the Daraja emulator's C2B simulate) counts for the link.
 */
const merchant = sandboxPaybill('menu-1');
const tillMerchant = sandboxTill('menu-till');
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant, tillMerchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), MPESA_QUERY_AFTER_SECONDS: '1' });
  store = await stack.createStore('Duka la Menyu');
  key = store.keys.test.secretKey;
  const connected = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) });
  expect(connected.status).toBe(200);
  expect(connected.body.c2bRegistration).toMatchObject({ registered: true, error: null });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

const newLink = async (mobileMoneyAmount: number) => {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount } });
  expect(res.status).toBe(201);
  await stack.workflowStarted(res.body.id);
  return res.body as { id: string; mobileMoneyAccountRef: string };
};
const page = async (id: string, query = '?rail=MOBILE_MONEY') => {
  const res = await stack.request({ method: 'GET', url: `/p/${id}${query}` });
  expect(res.status).toBe(200);
  return res.text as string;
};
/** The link's Dynamic QR image as the browser fetches it. */
const qrImage = (id: string, amount: number) => fetch(`${stack.baseUrl}/p/${id}/mpesa-qr.png?amount=${amount}`);
const qrCalls = () => daraja.requests.filter((r) => r.path === '/mpesa/qrcode/v1/generate').length;

/** The text of the element with this data-testid, or undefined. */
const field = (html: string, testid: string) => new RegExp(`data-testid="${testid}">([^<]*)<`).exec(html)?.[1];

describe('paying from the M-Pesa menu, on the checkout', () => {
  it('shows the paybill, the account number and the KES due beside the prompt form, in English and in Swahili', async () => {
    const link = await newLink(1500);
    expect(link.mobileMoneyAccountRef).toMatch(/^[0-9A-Z]{8}$/);

    const en = await page(link.id);
    expect(en).toContain('No prompt? Pay from the M-Pesa menu');
    expect(en).toContain('Scan the code in the M-Pesa app, or go to M-Pesa → Lipa na M-Pesa → Pay Bill and enter:');
    expect(field(en, 'menu-paybill')).toBe(merchant.shortCode);
    expect(field(en, 'menu-account')).toBe(link.mobileMoneyAccountRef);
    expect(field(en, 'menu-amount')).toMatch(/^KES\s?1,500$/);
    // The prompt form is still there: the menu is the other way, not the only one.
    expect(en).toContain('name="phoneNumber"');
    expect(en).toContain(`Paybill ${merchant.shortCode}. Enter your M-Pesa PIN on your phone when asked.`);

    const sw = await page(link.id, '?rail=MOBILE_MONEY&lang=sw');
    expect(sw).toContain('Hujapata ombi? Lipa kupitia menyu ya M-Pesa');
    expect(sw).toContain('Namba ya akaunti');
    expect(field(sw, 'menu-account')).toBe(link.mobileMoneyAccountRef);
  });

  it('asks for what is still due after a part was paid from the menu, and disappears once the link is paid', async () => {
    const link = await newLink(1000);
    await daraja.c2bPay({ ShortCode: merchant.shortCode, CommandID: 'CustomerPayBillOnline', Amount: 400, Msisdn: '254708374149', BillRefNumber: link.mobileMoneyAccountRef });
    await eventually(async () => (field(await page(link.id), 'menu-amount') ?? '').replace(/\s/g, '').includes('600') || undefined, 'the page asks for KES 600');

    await daraja.c2bPay({ ShortCode: merchant.shortCode, CommandID: 'CustomerPayBillOnline', Amount: 600, Msisdn: '254708374149', BillRefNumber: link.mobileMoneyAccountRef.toLowerCase() });
    await eventually(async () => ((await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body.status === 'CONFIRMED' ? true : undefined), 'CONFIRMED');
    expect(await page(link.id)).not.toContain('data-testid="menu-pay"');
  });

  it('is not offered where Daraja refused the C2B URLs: a payment from the menu would reach nobody', async () => {
    const link = await newLink(700);
    expect(await page(link.id)).toContain('data-testid="menu-pay"');
    await stack.pool.query(sql.unsafe`UPDATE mpesa_c2b_registrations SET error = 'Invalid ValidationURL' WHERE store_id = ${store.clientId}`);
    try {
      const html = await page(link.id);
      expect(html).not.toContain('data-testid="menu-pay"');
      expect(html).toContain('name="phoneNumber"');
    } finally {
      await stack.pool.query(sql.unsafe`UPDATE mpesa_c2b_registrations SET error = NULL WHERE store_id = ${store.clientId}`);
    }
  });

  it("shows Daraja's Dynamic QR, generated once per amount through the store's credentials, which the M-Pesa app scans with the paybill, account and amount filled in", async () => {
    const link = await newLink(2500);
    const before = qrCalls();
    const first = await qrImage(link.id, 2500);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await first.arrayBuffer());
    expect(decodeQrPng(png)).toBe(`PB|${merchant.shortCode}|${link.mobileMoneyAccountRef}|2500|Duka la Menyu`);
    // Reloads are served from the database: Daraja drew it once.
    expect((await qrImage(link.id, 2500)).status).toBe(200);
    expect(qrCalls()).toBe(before + 1);

    // As a customer's phone shows it, in both languages: decoded from a screenshot of the page.
    const browser = await launchBrowser();
    try {
      for (const lang of ['en', 'sw']) {
        const context = await browser.newContext(phone);
        const page = await context.newPage();
        await page.goto(`${stack.baseUrl}/p/${link.id}?rail=MOBILE_MONEY&lang=${lang}`);
        const img = page.getByTestId('mpesa-qr');
        await img.waitFor();
        await page.waitForFunction(() => (document.querySelector('[data-testid="mpesa-qr"]') as HTMLImageElement | null)?.complete === true);
        expect(decodeQrPng(await img.screenshot())).toBe(`PB|${merchant.shortCode}|${link.mobileMoneyAccountRef}|2500|Duka la Menyu`);
        await context.close();
      }
    } finally {
      await browser.close();
    }
    expect(qrCalls()).toBe(before + 1);
  });

  it('asks Daraja again only for a new amount, and answers 503 (the typed instructions stay) when Daraja cannot draw one', async () => {
    const link = await newLink(900);
    daraja.failNext(1, 'drop_connection', '/mpesa/qrcode/v1/generate');
    const failed = await qrImage(link.id, 900);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('30');
    expect(field(await page(link.id), 'menu-account')).toBe(link.mobileMoneyAccountRef);
    expect((await qrImage(link.id, 900)).status).toBe(200);

    await daraja.c2bPay({ ShortCode: merchant.shortCode, CommandID: 'CustomerPayBillOnline', Amount: 300, Msisdn: '254708374149', BillRefNumber: link.mobileMoneyAccountRef });
    await eventually(async () => (field(await page(link.id), 'menu-amount') ?? '').replace(/\s/g, '').includes('600') || undefined, 'the page asks for KES 600');
    expect(await page(link.id)).toContain(`/p/${link.id}/mpesa-qr.png?amount=600`);
    const calls = qrCalls();
    const second = await qrImage(link.id, 600);
    expect(decodeQrPng(Buffer.from(await second.arrayBuffer()))).toBe(`PB|${merchant.shortCode}|${link.mobileMoneyAccountRef}|600|Duka la Menyu`);
    expect(qrCalls()).toBe(calls + 1);
  });

  it('has no QR for a link that offers no menu payment (unknown, paid, or not an id)', async () => {
    expect((await qrImage('pl_doesnotexist', 1)).status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/p/%00/mpesa-qr.png`)).status).toBe(404);
  });
});

describe('paying a till from the M-Pesa menu, on the checkout', () => {
  let tillStore: CreatedStore;
  let tillKey: string;
  const till = tillMerchant.tills![0]!;
  beforeAll(async () => {
    tillStore = await stack.createStore('Duka la Till');
    tillKey = tillStore.keys.test.secretKey;
    const connected = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${tillStore.clientId}/mobile-money/connect`, key: tillKey, payload: connectBody(tillMerchant) });
    expect(connected.status).toBe(200);
    expect(connected.body.c2bRegistration).toMatchObject({ registered: true, error: null });
  });

  it('shows Buy Goods, the till and the KES due, says the payment is matched by amount only, in English and in Swahili, with a Buy Goods Dynamic QR', async () => {
    const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: tillKey, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 1750 } });
    expect(res.status).toBe(201);
    const link = res.body as { id: string; mobileMoneyAccountRef: string; mobileMoneyShortcode: string };

    const en = await page(link.id);
    expect(en).toContain('go to M-Pesa → Lipa na M-Pesa → Buy Goods and Services and enter:');
    expect(field(en, 'menu-till')).toBe(till);
    expect(field(en, 'menu-amount')).toMatch(/^KES\s?1,750$/);
    // The prompt form names the till it pays, not a paybill.
    expect(en).toContain(`Till ${link.mobileMoneyShortcode} (Buy Goods). Enter your M-Pesa PIN on your phone when asked.`);
    expect(en).not.toContain('Paybill ');
    // No account number to type: a Buy Goods payment carries none.
    expect(en).not.toContain('data-testid="menu-account"');
    expect(en).not.toContain('data-testid="menu-paybill"');
    expect(field(en, 'menu-hint')).toBe('Till payments carry no account number: we match them to this order by the amount only. Pay exactly this amount. If another order has the same amount, the merchant may need to assign your payment to this order. This page updates once M-Pesa tells us.');

    const sw = await page(link.id, '?rail=MOBILE_MONEY&lang=sw');
    expect(sw).toContain('nenda M-Pesa → Lipa na M-Pesa → Buy Goods and Services kisha weka:');
    expect(sw).toContain('Namba ya till');
    expect(sw).toContain(`Namba ya till ${link.mobileMoneyShortcode} (Buy Goods). Weka PIN yako ya M-Pesa kwenye simu ukiombwa.`);
    expect(field(sw, 'menu-till')).toBe(till);
    expect(field(sw, 'menu-hint')).toContain('Malipo ya till hayana namba ya akaunti');
    expect(sw).not.toContain('data-testid="menu-account"');

    // Daraja's Dynamic QR for a till: TrxCode BG, CPI the till number (RefNo, which Daraja requires, the account reference).
    const browser = await launchBrowser();
    try {
      for (const lang of ['en', 'sw']) {
        const context = await browser.newContext(phone);
        const tab = await context.newPage();
        await tab.goto(`${stack.baseUrl}/p/${link.id}?rail=MOBILE_MONEY&lang=${lang}`);
        await tab.getByTestId('menu-till').waitFor();
        expect(await tab.getByTestId('menu-hint').textContent()).toContain(lang === 'en' ? 'by the amount only' : 'kwa kiasi pekee');
        const img = tab.getByTestId('mpesa-qr');
        await tab.waitForFunction(() => (document.querySelector('[data-testid="mpesa-qr"]') as HTMLImageElement | null)?.complete === true);
        expect(decodeQrPng(await img.screenshot())).toBe(`BG|${till}|${link.mobileMoneyAccountRef}|1750|Duka la Till`);
        await context.close();
      }
    } finally {
      await browser.close();
    }
  });
});
