import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * The checkout's "No prompt? Pay from the M-Pesa menu" block (issue 29 item 7): the paybill, the
 * link's account number and the KES still due, server-rendered in English and Swahili, only where
 * Daraja took the store's C2B URLs, only while the link is open; then a payment made from the menu
 * with that account number (the Daraja emulator's C2B simulate) counts for the link.
 */
const merchant = sandboxPaybill('menu-1');
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
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
/** The text of the element with this data-testid, or undefined. */
const field = (html: string, testid: string) => new RegExp(`data-testid="${testid}">([^<]*)<`).exec(html)?.[1];

describe('paying from the M-Pesa menu, on the checkout', () => {
  it('shows the paybill, the account number and the KES due beside the prompt form, in English and in Swahili', async () => {
    const link = await newLink(1500);
    expect(link.mobileMoneyAccountRef).toMatch(/^[0-9A-Z]{8}$/);

    const en = await page(link.id);
    expect(en).toContain('No prompt? Pay from the M-Pesa menu');
    expect(en).toContain('M-Pesa → Lipa na M-Pesa → Pay Bill, then enter:');
    expect(field(en, 'menu-paybill')).toBe(merchant.shortCode);
    expect(field(en, 'menu-account')).toBe(link.mobileMoneyAccountRef);
    expect(field(en, 'menu-amount')).toMatch(/^KES\s?1,500$/);
    // The prompt form is still there: the menu is the other way, not the only one.
    expect(en).toContain('name="phoneNumber"');

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
});
