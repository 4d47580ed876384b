import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { loggerOptions } from '../../api/plugins/log-redaction.js';
import { updateStorePolicy, type CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { hashC2bToken } from '../../rails/mpesa/c2b.js';
import { displayAccountRef, newAccountRef } from '../../rails/mpesa/account-ref.js';
import { insertLink } from '../../db/payment-link-repo.js';
import { newId } from '../../domain/ids.js';
import { RateService } from '../../services/rates/rate-service.js';
import { createPaymentLink } from '../../services/payment-links/payment-links.js';
import { connectMobileMoney } from '../../services/mpesa/connect.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { mobileMoneyLinks } from '../helpers/mobile-money-links.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { httpCall } from '../helpers/http.js';
import { eventually } from '../helpers/wait.js';

/**
 * Paybill payments made from the M-Pesa menu (C2B), end to end on real parts: the Daraja
 * emulator registers our URLs on connect and posts validation then confirmation to them; the
 * link's workflow (real Temporal) counts a confirmation only from the stored row.
 */
const merchant = sandboxPaybill('c2b-1');
const logLines: string[] = [];
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
let phoneSeq = 500;
const nextPhone = () => `2547${String(++phoneSeq).padStart(8, '0')}`;

beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _enc, done) => void (logLines.push(String(chunk)), done()) });
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), MPESA_QUERY_AFTER_SECONDS: '1' }, { logger: pino(loggerOptions('info'), sink) });
  store = await stack.createStore('Paybill');
  key = store.keys.test.secretKey;
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

const links = mobileMoneyLinks(() => ({ stack, storeId: store.clientId, key }));
const connect = (extra: Record<string, unknown> = {}) => links.connect(merchant, extra);
const { newLink, getLink, statusIs } = links;
const pay = (billRef: string, amount: number, transId?: string) =>
  daraja.c2bPay({ ShortCode: merchant.shortCode, CommandID: 'CustomerPayBillOnline', Amount: amount, Msisdn: nextPhone(), BillRefNumber: billRef, ...(transId ? { transId } : {}) });
const c2bRows = (linkOrTrans: string) => stack.pool.any(sql.type(z.object({ trans_id: z.string(), state: z.string(), amount: z.string(), link_id: z.string().nullable() }))`
  SELECT trans_id, state, amount::text, link_id FROM mpesa_c2b_payments WHERE link_id = ${linkOrTrans} OR trans_id = ${linkOrTrans} ORDER BY id`);
const suspiciousPosts = () => stack.pool.any(sql.type(z.object({ kind: z.string(), trans_id: z.string().nullable(), reason: z.string() }))`
  SELECT kind, trans_id, reason FROM mpesa_c2b_suspicious_posts ORDER BY id`);
const confirmDirect = (body: Record<string, string>) => {
  const confirmation = daraja.c2bRegistrations.get(merchant.shortCode)!.confirmationUrl;
  return stack.request({ method: 'POST', url: new URL(confirmation).pathname, payload: { TransactionType: 'Pay Bill', BusinessShortCode: merchant.shortCode, MSISDN: '25470****149', FirstName: 'John', ...body } });
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('connecting registers the C2B URLs', () => {
  it('registers confirmation and validation URLs (v2) with a per-shortcode token stored only hashed, rotated on reconnect', async () => {
    const res = await connect();
    expect(res.status).toBe(200);
    expect(res.body.c2bRegistration).toEqual({ registered: true, apiVersion: 'v2', error: null });
    const reg = daraja.c2bRegistrations.get(merchant.shortCode)!;
    expect(reg).toMatchObject({ responseType: 'Completed', version: 'v2' });
    const token = reg.confirmationUrl.split('/').at(-2)!;
    expect(reg.confirmationUrl).toBe(`http://malipo.test/v1/callbacks/c2b/${token}/confirmation`);
    expect(reg.validationUrl).toBe(`http://malipo.test/v1/callbacks/c2b/${token}/validation`);
    expect(reg.confirmationUrl).not.toMatch(/mpesa|safaricom|exe|cmd|sql|query/i);
    const stored = await stack.pool.oneFirst(sql.type(z.object({ h: z.instanceof(Buffer) }))`SELECT token_hash AS h FROM mpesa_c2b_registrations`);
    expect(stored.equals(hashC2bToken(token))).toBe(true);
    expect(logLines.filter((l) => l.includes(token))).toEqual([]);

    // Reconnecting rotates the token: the old URL confirms nothing any more.
    expect((await connect()).status).toBe(200);
    const rotated = daraja.c2bRegistrations.get(merchant.shortCode)!;
    expect(rotated.confirmationUrl).not.toBe(reg.confirmationUrl);
    const stale = await stack.request({ method: 'POST', url: `/v1/callbacks/c2b/${token}/confirmation`, payload: { TransID: 'STALE00001', TransAmount: '10.00', BusinessShortCode: '174379', BillRefNumber: 'X' } });
    expect(stale.status).toBe(404);
    expect(stale.body.error).toMatchObject({ type: 'not_found_error' });
    expect(await suspiciousPosts()).toContainEqual({ kind: 'unknown_token', trans_id: 'STALE00001', reason: 'posted to an unknown C2B URL' });
  });

  it('falls back to v1 where Daraja has no v2; a refusal keeps the connection and the URLs that worked', async () => {
    const other = sandboxPaybill('c2b-v1');
    const v1Only = await startDarajaEmulator({ merchants: [other], c2bV2: false });
    try {
      const s = await stack.createStore('V1 only');
      const config = { ...stack.config, mpesa: { ...stack.config.mpesa, sandboxUrl: v1Only.url } };
      const who = { storeId: s.clientId, environment: 'test' as const };
      const res = await connectMobileMoney({ pool: stack.pool, config }, who, connectBody(other) as never);
      expect(res.c2bRegistration).toEqual({ registered: true, apiVersion: 'v1', error: null });
      expect(v1Only.requests.map((r) => `${r.path} ${r.status}`).slice(-2)).toEqual(['/mpesa/c2b/v2/registerurl 404', '/mpesa/c2b/v1/registerurl 200']);
      const before = await stack.pool.oneFirst(sql.type(z.object({ h: z.instanceof(Buffer) }))`SELECT token_hash AS h FROM mpesa_c2b_registrations WHERE store_id = ${s.clientId}`);

      // A URL with a word Daraja forbids is refused before Daraja is asked; the connection stands.
      const forbidden = { ...config, publicBaseUrl: 'https://pay.mpesa-shop.example' };
      const refused = await connectMobileMoney({ pool: stack.pool, config: forbidden }, who, connectBody(other) as never);
      expect(refused).toMatchObject({ ok: true, c2bRegistration: { registered: false, error: { code: 'c2b_registration_failed', param: 'shortcode' } } });
      expect(refused.c2bRegistration.error!.message).toContain('contains "mpesa"');
      const after = await stack.pool.one(sql.type(z.object({ h: z.instanceof(Buffer), error: z.string().nullable() }))`
        SELECT token_hash AS h, error FROM mpesa_c2b_registrations WHERE store_id = ${s.clientId}`);
      expect(after.h.equals(before)).toBe(true);
      expect(after.error).toContain('contains "mpesa"');
    } finally {
      await v1Only.close();
    }
  });

  it('gives each link an account reference, which its STK prompt carries as AccountReference', async () => {
    const link = await newLink(30);
    expect(link.mobileMoneyAccountRef).toMatch(/^[0-9A-HJKMNP-TV-Y]{8}$/);
    const phone = nextPhone();
    const prompt = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    expect(prompt.status).toBe(200);
    expect(daraja.state.prompts.get(prompt.body.checkoutRequestId)!.request.AccountReference).toBe(link.mobileMoneyAccountRef);
  });
});

describe('validation', () => {
  it('refuses an unknown reference and a typo (C2B00012): M-Pesa never takes the money; accepts a variant of a real one', async () => {
    const link = await newLink(50);
    const unknown = await pay('INV-2024-001', 50);
    expect(unknown.outcome).toBe('refused');
    expect(unknown.validation!.body).toEqual({ ResultCode: 'C2B00012', ResultDesc: 'Rejected' });
    const ref = link.mobileMoneyAccountRef;
    const typo = ref.slice(0, 2) + (ref[2] === 'A' ? 'B' : 'A') + ref.slice(3);
    expect((await pay(typo, 50)).outcome).toBe('refused');
    expect(await c2bRows(unknown.transId)).toEqual([]);

    const variant = displayAccountRef(ref).toLowerCase().replace(/0/g, 'o').replace(/1/g, 'l');
    const ok = await pay(variant, 50);
    expect(ok.validation!.body).toEqual({ ResultCode: '0', ResultDesc: 'Accepted' });
    expect(ok.deliveries).toEqual([{ status: 200, body: { ResultCode: '0', ResultDesc: 'Accepted' } }]);
    const confirmed = await eventually(statusIs(link.id, 'CONFIRMED'), 'the paybill payment to confirm the link');
    expect(confirmed).toMatchObject({ confirmedRail: 'MOBILE_MONEY', externalId: ok.transId, payer: 'John Doe', mobileMoneyAmountDue: 0 });
  });
});

describe('confirmations', () => {
  it('two partial payments add up; the link shows what is still due and confirms at the second', async () => {
    const link = await newLink(100);
    const first = await pay(link.mobileMoneyAccountRef, 40);
    const partial = await eventually(async () => {
      const l = await getLink(link.id);
      return l.payments.length === 1 ? l : undefined;
    }, 'the first partial payment counted');
    expect(partial).toMatchObject({ status: 'PENDING', mobileMoneyAmountDue: 60 });
    expect(partial.payments[0]).toMatchObject({ externalId: first.transId, amount: '40', state: 'confirmed', disposition: 'underpaid' });
    const second = await pay(link.mobileMoneyAccountRef.toLowerCase(), 60);
    const done = await eventually(statusIs(link.id, 'CONFIRMED'), 'CONFIRMED by the second payment');
    expect(done.externalId).toBe(second.transId);
    expect(done.mobileMoneyAmountDue).toBe(0);
    expect(done.payments.map((p: { amount: string }) => p.amount).sort()).toEqual(['40', '60']);
  });

  it('a TransID posted twice (duplicate delivery) counts once; an altered replay confirms nothing and is suspicious', async () => {
    const link = await newLink(70);
    daraja.c2bScript({ confirmation: 'duplicate', alterAfter: { TransAmount: '7000.00' } });
    const p = await pay(link.mobileMoneyAccountRef, 20);
    daraja.c2bScript({ confirmation: 'once' });
    expect(p.deliveries.map((d) => d.status)).toEqual([200, 200, 200]);
    await eventually(async () => ((await getLink(link.id)).payments.length === 1 ? true : undefined), 'the payment counted');
    await pause(1_500);
    const l = await getLink(link.id);
    expect(l).toMatchObject({ status: 'PENDING', mobileMoneyAmountDue: 50 });
    expect(l.payments).toEqual([expect.objectContaining({ amount: '20', externalId: p.transId })]);
    expect(await c2bRows(p.transId)).toEqual([{ trans_id: p.transId, state: 'matched', amount: '20.00', link_id: link.id }]);
    expect((await suspiciousPosts()).filter((s) => s.trans_id === p.transId)).toEqual([
      { kind: 'altered', trans_id: p.transId, reason: `TransID ${p.transId} was received before with other details (amount 20.00, reference ${link.mobileMoneyAccountRef})` },
    ]);
  });

  it('an STK payment and its C2B twin (same receipt) count once', async () => {
    const link = await newLink(45);
    const phone = nextPhone();
    daraja.script(phone, { result: 'success' });
    const prompt = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    const settled = await daraja.complete(prompt.body.checkoutRequestId, 'success');
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the prompt confirms the link');
    // Daraja posts the confirmation of a paid prompt to the C2B URL too (no validation for a prompt).
    expect((await confirmDirect({ TransID: settled.receipt!, TransAmount: '45.00', BillRefNumber: link.mobileMoneyAccountRef })).status).toBe(200);
    await eventually(async () => ((await c2bRows(settled.receipt!))[0]?.state === 'counted_as_prompt' ? true : undefined), 'the twin recognised');
    const l = await getLink(link.id);
    expect(l.payments).toEqual([expect.objectContaining({ amount: '45', externalId: settled.receipt, disposition: 'payment' })]);
  });

  it('a C2B confirmation counted before its STK twin settles: the prompt then counts nothing', async () => {
    const link = await newLink(55);
    const phone = nextPhone();
    daraja.script(phone, { result: 'success', callback: 'none' });
    const prompt = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    const settled = await daraja.complete(prompt.body.checkoutRequestId, 'success');
    expect((await confirmDirect({ TransID: settled.receipt!, TransAmount: '55.00', BillRefNumber: link.mobileMoneyAccountRef })).status).toBe(200);
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the C2B confirmation confirms the link');
    // The prompt's callback comes late, naming the same receipt.
    const callback = await stack.request({
      method: 'POST', url: new URL(settled.callbackUrl).pathname,
      payload: { Body: { stkCallback: { MerchantRequestID: settled.merchantRequestId, CheckoutRequestID: settled.checkoutRequestId, ResultCode: 0, ResultDesc: 'The service request is processed successfully.',
        CallbackMetadata: { Item: [{ Name: 'Amount', Value: 55 }, { Name: 'MpesaReceiptNumber', Value: settled.receipt }, { Name: 'TransactionDate', Value: 20260101120000 }, { Name: 'PhoneNumber', Value: Number(phone) }] } } } },
    });
    expect(callback.status).toBe(200);
    const l = await eventually(async () => {
      const x = await getLink(link.id);
      return x.payments.some((p: { state: string }) => p.state === 'failed') ? x : undefined;
    }, 'the prompt settled as already counted');
    const counted = l.payments.filter((p: { state: string }) => p.state === 'confirmed');
    expect(counted).toEqual([expect.objectContaining({ amount: '55', externalId: settled.receipt })]);
    expect(l.payments.find((p: { state: string }) => p.state === 'failed').failureReason).toContain(`already counted as M-Pesa payment ${settled.receipt}`);
  });

  it('a payment after cancel is recorded as such; one after expiry (within the late window) as late', async () => {
    const cancelled = await newLink(25);
    expect((await stack.request({ method: 'POST', url: `/v1/payment-links/${cancelled.id}/cancel`, key })).status).toBe(200);
    const afterCancel = await pay(cancelled.mobileMoneyAccountRef, 25);
    // Validation refuses a closed link's reference, so M-Pesa never takes it...
    expect(afterCancel.outcome).toBe('refused');
    // ...but where the merchant has no validation, the confirmation comes anyway: recorded as after_cancel.
    const confirmation = daraja.c2bRegistrations.get(merchant.shortCode)!.confirmationUrl;
    const direct = await stack.request({ method: 'POST', url: new URL(confirmation).pathname, payload: { TransactionType: 'Pay Bill', TransID: 'CANCEL0002', TransAmount: '25.00', BusinessShortCode: merchant.shortCode, BillRefNumber: cancelled.mobileMoneyAccountRef, MSISDN: '25470****149', FirstName: 'Jane' } });
    expect(direct.status).toBe(200);
    const c = await eventually(async () => {
      const l = await getLink(cancelled.id);
      return l.payments.some((p: { externalId: string }) => p.externalId === 'CANCEL0002') ? l : undefined;
    }, 'the payment after cancel recorded');
    expect(c.status).toBe('CANCELLED');
    expect(c.payments.find((p: { externalId: string }) => p.externalId === 'CANCEL0002')).toMatchObject({ disposition: 'after_cancel', amount: '25' });

    await updateStorePolicy(stack.pool, store.clientId, 'test', { lateWatchMinutes: 5 });
    const rates = new RateService({ testKesPerUsdt: '130', sources: [] });
    const auth = { kind: 'secret' as const, storeId: store.clientId, storeName: 'Paybill', environment: 'test' as const, keyId: '' };
    const late = await createPaymentLink({ config: stack.config, pool: stack.pool, temporal: stack.temporal, rates }, auth, { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 35, expiresInMinutes: 0.03 } as never);
    await eventually(statusIs(late.id, 'EXPIRED'), 'EXPIRED');
    const post = await stack.request({ method: 'POST', url: new URL(confirmation).pathname, payload: { TransactionType: 'Pay Bill', TransID: 'LATE000001', TransAmount: '35', BusinessShortCode: merchant.shortCode, BillRefNumber: late.mobileMoneyAccountRef } });
    expect(post.status).toBe(200);
    const l = await eventually(statusIs(late.id, 'CONFIRMED'), 'the late payment confirms');
    expect(l.payments[0]).toMatchObject({ disposition: 'late', externalId: 'LATE000001' });
    await updateStorePolicy(stack.pool, store.clientId, 'test', { lateWatchMinutes: 1440 });
  });

  it('a forged post to a guessed URL confirms nothing; the token never reaches a workflow history', async () => {
    const link = await newLink(15);
    const forged = await stack.request({ method: 'POST', url: `/v1/callbacks/c2b/${'a'.repeat(40)}/confirmation`, payload: { TransID: 'FORGED0001', TransAmount: '15', BusinessShortCode: merchant.shortCode, BillRefNumber: link.mobileMoneyAccountRef } });
    expect(forged.status).toBe(404);
    expect(await c2bRows('FORGED0001')).toEqual([]);
    expect(await suspiciousPosts()).toContainEqual({ kind: 'unknown_token', trans_id: 'FORGED0001', reason: 'posted to an unknown C2B URL' });
    const p = await pay(link.mobileMoneyAccountRef, 15);
    await eventually(statusIs(link.id, 'CONFIRMED'), 'CONFIRMED');
    const token = daraja.c2bRegistrations.get(merchant.shortCode)!.confirmationUrl.split('/').at(-2)!;
    const history = await stack.temporal.workflow.getHandle(paymentLinkWorkflowId(link.id)).fetchHistory();
    const text = JSON.stringify(history).replace(/"data":"([A-Za-z0-9+/=]+)"/g, (_m, b64: string) => Buffer.from(b64, 'base64').toString('utf8'));
    expect(text).toContain(p.transId);
    expect(text).not.toContain(token);
    expect(logLines.filter((l) => l.includes(token))).toEqual([]);
    expect(logLines.some((l) => l.includes('/v1/callbacks/c2b/[redacted]'))).toBe(true);
  });

  it('a confirmation for a link whose workflow has not started yet starts it, and counts', async () => {
    // As if the creating process died before handing the start off (the row says not started).
    const ref = newAccountRef();
    const row = await insertLink(stack.pool, {
      id: newId('paymentLink'), kind: 'payment_link', storeId: store.clientId, environment: 'test', usdtAmount: '1', mobileMoneyAmount: 30,
      kesPerUsdt: '130', rateSource: 'test', enabledRails: ['MOBILE_MONEY'], addressIndex: null, tronAddress: null, evmAddress: null,
      solanaAddress: null, solanaReference: null, solanaMint: null, mobileMoneyShortcode: merchant.shortCode, mobileMoneyAccountRef: ref,
      description: null, merchantRef: null, metadata: null, redirectUrl: null,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(), watchUntil: new Date(Date.now() + 7_200_000).toISOString(),
    });
    expect(row.workflow_started).toBe(false);
    expect((await confirmDirect({ TransID: 'EARLY00001', TransAmount: '30', BillRefNumber: ref })).status).toBe(200);
    const l = await eventually(statusIs(row.id, 'CONFIRMED'), 'the early confirmation counted once the workflow started');
    expect(l.externalId).toBe('EARLY00001');
  });

  it('a reference that matches no link is kept as unallocated (validation off for the shortcode)', async () => {
    const res = await confirmDirect({ TransID: 'UNALLOC001', TransAmount: '99.00', BillRefNumber: 'order 17' });
    expect(res.status).toBe(200);
    expect(await c2bRows('UNALLOC001')).toEqual([{ trans_id: 'UNALLOC001', state: 'unallocated', amount: '99.00', link_id: null }]);
    // The merchant hears of it: a mobile_money.unallocated event in the outbox (the sweeper delivers it).
    const events = await stack.pool.anyFirst(sql.type(z.object({ payload: z.any() }))`
      SELECT payload FROM events WHERE type = 'mobile_money.unallocated' AND payload->'data'->>'transId' = 'UNALLOC001'`);
    expect(events).toEqual([expect.objectContaining({ type: 'mobile_money.unallocated', environment: 'test', data: expect.objectContaining({ transId: 'UNALLOC001', amount: '99', billRefNumber: 'order 17', state: 'unallocated' }) })]);
    expect((await confirmDirect({ TransID: 'UNALLOC001', TransAmount: '99.00', BillRefNumber: 'order 17' })).status).toBe(200);
    expect(await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM events WHERE type = 'mobile_money.unallocated' AND payload->'data'->>'transId' = 'UNALLOC001'`)).toBe(1);
  });

  it('an unallocated payment is listed, and assigned to a link by hand (audited); the link then counts it', async () => {
    const list = await stack.request({ method: 'GET', url: '/v1/mobile-money/unallocated?limit=100', key });
    expect(list.status).toBe(200);
    const item = list.body.data.find((d: { transId: string }) => d.transId === 'UNALLOC001');
    expect(item).toMatchObject({ amount: '99', currency: 'KES', billRefNumber: 'order 17', msisdn: '25470****149', payerName: 'John', state: 'unallocated', linkId: null });
    const link = await newLink(99);
    const missing = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/NOSUCH0001/assign', key, payload: { linkId: link.id } });
    expect([missing.status, missing.body.error.type]).toEqual([404, 'not_found_error']);
    const otherStore = await stack.createStore('Other');
    const foreign = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/UNALLOC001/assign', key: otherStore.keys.test.secretKey, payload: { linkId: link.id } });
    expect(foreign.status).toBe(404);

    const assigned = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/UNALLOC001/assign', key, payload: { linkId: link.id } });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toMatchObject({ transId: 'UNALLOC001', state: 'matched', linkId: link.id, assignedBy: expect.stringMatching(/^key:/) });
    const confirmed = await eventually(statusIs(link.id, 'CONFIRMED'), 'the assigned payment confirms the link');
    expect(confirmed).toMatchObject({ externalId: 'UNALLOC001', mobileMoneyAmountDue: 0 });
    const again = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/UNALLOC001/assign', key, payload: { linkId: link.id } });
    expect([again.status, again.body.error.code]).toEqual([409, 'invalid_state']);
    const after = await stack.request({ method: 'GET', url: '/v1/mobile-money/unallocated', key });
    expect(after.body.data.map((d: { transId: string }) => d.transId)).not.toContain('UNALLOC001');
  });

  it('the dashboard shows the registration and the unallocated payments; a developer assigns one there', async () => {
    expect((await confirmDirect({ TransID: 'UNALLOC002', TransAmount: '21', BillRefNumber: 'wrong ref' })).status).toBe(200);
    const user = await dashboardUser(stack, store, 'developer');
    const session = await signInHttp(stack.baseUrl, user);
    const page = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/mobile-money', headers: { cookie: session.cookie } });
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/data-testid="mpesa-c2b">URLs registered \(v2\)/);
    expect(page.text).toContain('data-testid="unallocated-UNALLOC002"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const link = await newLink(21);
    const res = await httpCall(stack.baseUrl, {
      method: 'POST', url: '/dashboard/mobile-money/unallocated/UNALLOC002/assign', payload: new URLSearchParams({ csrf, linkId: link.id }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl, cookie: session.cookie },
    });
    expect(res.status).toBe(303);
    await eventually(statusIs(link.id, 'CONFIRMED'), 'the assigned payment confirms the link');
    const assignedBy = await stack.pool.oneFirst(sql.type(z.object({ a: z.string().nullable() }))`SELECT assigned_by AS a FROM mpesa_c2b_payments WHERE trans_id = 'UNALLOC002'`);
    expect(assignedBy).toBe(`user:${user.userId}`);
  });

  it('an unallocated payment marked for refund outside Malipo (API and dashboard) leaves the list, is recorded, and can no longer be assigned', async () => {
    expect((await confirmDirect({ TransID: 'REFUND0001', TransAmount: '33', BillRefNumber: 'no such order' })).status).toBe(200);
    expect((await confirmDirect({ TransID: 'REFUND0002', TransAmount: '44', BillRefNumber: 'no such order either' })).status).toBe(200);
    const bad = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/REFUND0001/refund', key, payload: { note: 'x'.repeat(501) } });
    expect([bad.status, bad.body.error.param]).toEqual([400, 'note']);
    const missing = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/NOSUCH0002/refund', key, payload: {} });
    expect(missing.status).toBe(404);
    const otherStore = await stack.createStore('Other refunds');
    expect((await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/REFUND0001/refund', key: otherStore.keys.test.secretKey, payload: {} })).status).toBe(404);
    expect(await c2bRows('REFUND0001')).toEqual([expect.objectContaining({ state: 'unallocated' })]);

    const marked = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/REFUND0001/refund', key, payload: { note: 'Reversed: OEI2AK4Q16' } });
    expect(marked.status).toBe(200);
    expect(marked.body).toMatchObject({ transId: 'REFUND0001', state: 'refund_outside', linkId: null, refundMarkedBy: expect.stringMatching(/^key:/), refundNote: 'Reversed: OEI2AK4Q16' });
    expect(marked.body.refundMarkedAt).toEqual(expect.any(String));
    const twice = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/REFUND0001/refund', key, payload: {} });
    expect([twice.status, twice.body.error.code]).toEqual([409, 'invalid_state']);
    const link = await newLink(33);
    const assign = await stack.request({ method: 'POST', url: '/v1/mobile-money/unallocated/REFUND0001/assign', key, payload: { linkId: link.id } });
    expect([assign.status, assign.body.error.code]).toEqual([409, 'invalid_state']);
    const open = await stack.request({ method: 'GET', url: '/v1/mobile-money/unallocated?limit=100', key });
    expect(open.body.data.map((d: { transId: string }) => d.transId)).not.toContain('REFUND0001');
    const refunds = await stack.request({ method: 'GET', url: '/v1/mobile-money/unallocated?state=refund_outside', key });
    expect(refunds.body.data.map((d: { transId: string }) => d.transId)).toEqual(['REFUND0001']);

    // In the dashboard, a developer marks the other one.
    const user = await dashboardUser(stack, store, 'developer');
    const session = await signInHttp(stack.baseUrl, user);
    const page = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/mobile-money', headers: { cookie: session.cookie } });
    expect(page.text).toContain('action="/dashboard/mobile-money/unallocated/REFUND0002/refund"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
    const res = await httpCall(stack.baseUrl, {
      method: 'POST', url: '/dashboard/mobile-money/unallocated/REFUND0002/refund', payload: new URLSearchParams({ csrf, note: '' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl, cookie: session.cookie },
    });
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard/mobile-money?refund=1']);
    const row = await stack.pool.one(sql.type(z.object({ state: z.string(), by: z.string().nullable(), note: z.string().nullable() }))`
      SELECT state, refund_marked_by AS by, refund_note AS note FROM mpesa_c2b_payments WHERE trans_id = 'REFUND0002'`);
    expect(row).toEqual({ state: 'refund_outside', by: `user:${user.userId}`, note: null });
    expect((await getLink(link.id)).status).toBe('PENDING');
  });

  it('store policy: without settling alone a confirmation waits for evidence; with unallocated allowed validation accepts any reference', async () => {
    expect((await connect({ c2bSettlesAlone: false, c2bUnallocatedAllowed: true })).body.c2bRegistration.registered).toBe(true);
    try {
      const link = await newLink(40);
      const p = await pay(link.mobileMoneyAccountRef, 40);
      expect(p.validation!.body).toEqual({ ResultCode: '0', ResultDesc: 'Accepted' });
      expect(await c2bRows(p.transId)).toEqual([{ trans_id: p.transId, state: 'awaiting_evidence', amount: '40.00', link_id: link.id }]);
      await pause(1_500);
      expect(await getLink(link.id)).toMatchObject({ status: 'PENDING', payments: [], mobileMoneyAmountDue: 40 });
      const stray = await pay('no such order', 12);
      expect([stray.outcome, stray.validation!.body]).toEqual(['completed', { ResultCode: '0', ResultDesc: 'Accepted' }]);
      expect(await c2bRows(stray.transId)).toEqual([{ trans_id: stray.transId, state: 'unallocated', amount: '12.00', link_id: null }]);
    } finally {
      expect((await connect({ c2bSettlesAlone: true, c2bUnallocatedAllowed: false })).status).toBe(200);
    }
  });
});
