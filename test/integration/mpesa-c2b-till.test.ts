import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { pullC2bPayments } from '../../services/mpesa/c2b-pull.js';
import { sandboxTill } from '../helpers/daraja.js';
import { mobileMoneyLinks } from '../helpers/mobile-money-links.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * Till (Buy Goods) payments from the M-Pesa menu, on real parts: the Daraja emulator posts a Buy
 * Goods confirmation (no account number) to the till's registered URL, and it is matched to a link
 * only when exactly one open link of the store has that amount still due; the link's workflow (real
 * Temporal) counts it from the stored row. Each test uses its own amounts: the store's open links
 * of other tests must not be candidates.
 */
const merchant = sandboxTill('c2b-till');
const till = merchant.tills![0]!;
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
let phoneSeq = 900;
const nextPhone = () => `2547${String(++phoneSeq).padStart(8, '0')}`;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), MPESA_QUERY_AFTER_SECONDS: '1' });
  store = await stack.createStore('Till');
  key = store.keys.test.secretKey;
  const connected = await links.connect(merchant, { c2bPullNominatedNumber: '254708374149' });
  expect(connected.status).toBe(200);
  expect(connected.body).toMatchObject({ shortcode: till, c2bRegistration: { registered: true }, pullRegistration: { registered: true } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

const links = mobileMoneyLinks(() => ({ stack, storeId: store.clientId, key }));
const { newLink, getLink, statusIs } = links;
/** A customer pays the till from the M-Pesa menu (Simulate with CustomerBuyGoodsOnline). */
const payTill = (amount: number, transId?: string) =>
  daraja.c2bPay({ ShortCode: till, CommandID: 'CustomerBuyGoodsOnline', Amount: amount, Msisdn: nextPhone(), ...(transId ? { transId } : {}) });
const confirmDirect = (body: Record<string, string>) => {
  const confirmation = daraja.c2bRegistrations.get(till)!.confirmationUrl;
  return stack.request({ method: 'POST', url: new URL(confirmation).pathname, payload: { TransactionType: 'Buy Goods', BusinessShortCode: till, BillRefNumber: '', MSISDN: '25470****149', FirstName: 'Jane', ...body } });
};
const row = async (transId: string) => stack.pool.maybeOne(sql.type(z.object({ state: z.string(), link_id: z.string().nullable(), source: z.string() }))`
  SELECT state, link_id, source FROM mpesa_c2b_payments WHERE trans_id = ${transId}`);
const pull = () => pullC2bPayments({ pool: stack.pool, temporal: stack.temporal, config: stack.config }, { storeId: store.clientId, environment: 'test' });

describe('a till payment is matched by its amount', () => {
  it('confirms the one open link with that amount due; posted twice, it counts once', async () => {
    const link = await newLink(611);
    daraja.c2bScript({ confirmation: 'duplicate' });
    const p = await payTill(611);
    daraja.c2bScript({ confirmation: 'once' });
    expect(p.confirmation).toMatchObject({ TransactionType: 'Buy Goods', BillRefNumber: '', BusinessShortCode: till });
    // Validation accepts a Buy Goods payment: it has no account number to check.
    expect(p.validation!.body).toEqual({ ResultCode: '0', ResultDesc: 'Accepted' });
    expect(p.deliveries.map((d) => d.status)).toEqual([200, 200]);
    const confirmed = await eventually(statusIs(link.id, 'CONFIRMED'), 'the till payment confirms the link');
    expect(confirmed).toMatchObject({ externalId: p.transId, mobileMoneyAmountDue: 0 });
    expect(confirmed.payments).toEqual([expect.objectContaining({ externalId: p.transId, amount: '611', state: 'confirmed' })]);
    expect(await row(p.transId)).toEqual({ state: 'matched', link_id: link.id, source: 'confirmation' });
  });

  it('two open links with that amount: unallocated, for the merchant to assign', async () => {
    const a = await newLink(622);
    const b = await newLink(622);
    const p = await payTill(622);
    expect(p.deliveries).toEqual([{ status: 200, body: { ResultCode: '0', ResultDesc: 'Accepted' } }]);
    expect(await row(p.transId)).toEqual({ state: 'unallocated', link_id: null, source: 'confirmation' });
    const listed = await stack.request({ method: 'GET', url: '/v1/mobile-money/unallocated?limit=100', key });
    expect(listed.body.data.find((d: { transId: string }) => d.transId === p.transId)).toMatchObject({ amount: '622', transactionType: 'Buy Goods', billRefNumber: '', state: 'unallocated' });
    for (const l of [a, b]) expect(await getLink(l.id)).toMatchObject({ status: 'PENDING', payments: [], mobileMoneyAmountDue: 622 });
  });

  it('another amount is unallocated; assigned, it counts as part of the link, and a till payment of what is still due confirms it', async () => {
    const link = await newLink(633);
    const part = await payTill(200);
    expect(await row(part.transId)).toEqual({ state: 'unallocated', link_id: null, source: 'confirmation' });
    expect((await getLink(link.id)).payments).toEqual([]);
    const assigned = await stack.request({ method: 'POST', url: `/v1/mobile-money/unallocated/${part.transId}/assign`, key, payload: { linkId: link.id } });
    expect(assigned.status).toBe(200);
    const partial = await eventually(async () => {
      const l = await getLink(link.id);
      return l.payments.length === 1 ? l : undefined;
    }, 'the assigned payment counted');
    expect(partial).toMatchObject({ status: 'PENDING', mobileMoneyAmountDue: 433 });
    // The link's amount (633) is no longer due: only what is still due matches it.
    const whole = await payTill(633);
    expect(await row(whole.transId)).toEqual({ state: 'unallocated', link_id: null, source: 'confirmation' });
    const rest = await payTill(433);
    const done = await eventually(statusIs(link.id, 'CONFIRMED'), 'the payment of what was still due confirms the link');
    expect(done).toMatchObject({ externalId: rest.transId, mobileMoneyAmountDue: 0 });
  });

  it('two till payments of the same amount at once: only one matches the link that asked for it', async () => {
    const link = await newLink(644);
    const [first, second] = await Promise.all([
      confirmDirect({ TransID: 'TILLRACE01', TransAmount: '644.00' }),
      confirmDirect({ TransID: 'TILLRACE02', TransAmount: '644.00' }),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    const states = [await row('TILLRACE01'), await row('TILLRACE02')].map((r) => `${r!.state}:${r!.link_id}`).sort();
    expect(states).toEqual([`matched:${link.id}`, 'unallocated:null']);
    const confirmed = await eventually(statusIs(link.id, 'CONFIRMED'), 'one of them confirms the link');
    expect(confirmed.payments).toHaveLength(1);
  });

  it('a matched payment not yet counted is a claim: while it waits for evidence, the same amount does not match the link again', async () => {
    expect((await links.connect(merchant, { c2bSettlesAlone: false })).status).toBe(200);
    try {
      const link = await newLink(655);
      const waiting = await payTill(655);
      expect(await row(waiting.transId)).toEqual({ state: 'awaiting_evidence', link_id: link.id, source: 'confirmation' });
      const again = await payTill(655);
      expect(await row(again.transId)).toEqual({ state: 'unallocated', link_id: null, source: 'confirmation' });
      // The pull corroborates the first: it confirms the link; the second stays unallocated.
      await pull();
      await eventually(statusIs(link.id, 'CONFIRMED'), 'the corroborated payment confirms the link');
      expect(await row(again.transId)).toMatchObject({ state: 'unallocated', link_id: null });
    } finally {
      expect((await links.connect(merchant, { c2bSettlesAlone: true })).status).toBe(200);
    }
  });
});

describe('till payments found by the pull', () => {
  it('a dropped Buy Goods confirmation is matched by amount when pulled; an ambiguous one is unallocated and a finding', async () => {
    const link = await newLink(666);
    await newLink(677);
    await newLink(677);
    daraja.c2bScript({ confirmation: 'none' });
    const dropped = await payTill(666);
    const ambiguous = await payTill(677);
    daraja.c2bScript({ confirmation: 'once' });
    expect(await row(dropped.transId)).toBeNull();
    await pull();
    expect(await row(dropped.transId)).toEqual({ state: 'matched', link_id: link.id, source: 'pull' });
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the pulled till payment confirms the link');
    expect(await row(ambiguous.transId)).toEqual({ state: 'unallocated', link_id: null, source: 'pull' });
    const findings = await stack.request({ method: 'GET', url: '/v1/reconciliation/findings?limit=100', key });
    expect(findings.body.data.filter((f: { address: string }) => f.address === `${till}:${ambiguous.transId}`)).toHaveLength(1);
  });
});

describe('a paid prompt posted to the till URL too', () => {
  it('names its link by the receipt and counts once, as the prompt', async () => {
    const link = await newLink(688);
    const phone = nextPhone();
    daraja.script(phone, { result: 'success' });
    const prompt = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    expect(prompt.status).toBe(200);
    const settled = await daraja.complete(prompt.body.checkoutRequestId, 'success');
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the prompt confirms the link');
    expect((await confirmDirect({ TransID: settled.receipt!, TransAmount: '688.00' })).status).toBe(200);
    await eventually(async () => ((await row(settled.receipt!))?.state === 'counted_as_prompt' ? true : undefined), 'the twin recognised');
    expect((await getLink(link.id)).payments).toEqual([expect.objectContaining({ amount: '688', externalId: settled.receipt })]);
  });
});
