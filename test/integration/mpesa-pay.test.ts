import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NativeConnection } from '@temporalio/worker';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator, type EmulatorMerchant, type Prompt } from '../../emulators/daraja/server.js';
import { createWorkers } from '../../worker/worker.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { sandboxPaybill } from '../helpers/daraja.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { sharedWorkflowBundle } from '../helpers/workflow-bundle.js';

const merchant = sandboxPaybill('pay-1a2b');

let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
let phoneSeq = 100;
/** A fresh phone per prompt: Daraja locks a phone while its prompt is open. */
const nextPhone = () => `2547${String(++phoneSeq).padStart(8, '0')}`;

beforeAll(async () => {
  daraja = await startDarajaEmulator({
    merchants: [merchant],
    // PUBLIC_BASE_URL (http://malipo.test) is where the stack would be published; this is the proxy.
    deliverVia: (u) => new URL(u.pathname, stack.baseUrl),
  });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()) });
  store = await stack.createStore('Mama Mboga');
  key = store.keys.test.secretKey;
  const res = await stack.request({
    method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key,
    payload: { consumerKey: merchant.consumerKey, consumerSecret: merchant.consumerSecret, shortcode: '174379', passkey: merchant.passkey, environment: 'sandbox' },
  });
  expect(res.status).toBe(200);
});
let restartedWorkers: (() => Promise<void>) | undefined;
afterAll(async () => {
  await restartedWorkers?.();
  await stack?.stop();
  await daraja?.close();
});

async function createLink(amountKes = 150, s = store, rails = ['MOBILE_MONEY']): Promise<string> {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: s.keys.test.secretKey, payload: { enabledRails: rails, mobileMoneyAmount: amountKes, merchantRef: 'ORDER-77/b' } });
  expect(res.status).toBe(201);
  return res.body.id;
}
const pay = (linkId: string, phoneNumber: unknown, k = key) =>
  stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${linkId}/pay/mobile-money`, key: k, payload: { phoneNumber } });
const getLink = async (id: string) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const statusIs = (id: string, status: string) => async () => {
  const link = await getLink(id);
  return link.status === status ? link : undefined;
};
const promptOf = (checkoutRequestId: string): Prompt => daraja.state.prompts.get(checkoutRequestId)!;
const callbackCount = async (checkoutRequestId: string) =>
  stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM mpesa_callbacks WHERE checkout_request_id = ${checkoutRequestId}`);

describe('paying a link by M-Pesa, end to end', () => {
  it('prompts the phone, takes the callback, and confirms the link with receipt and payer', async () => {
    const linkId = await createLink(150);
    const phone = nextPhone();
    const res = await pay(linkId, phone);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, checkoutRequestId: expect.stringMatching(/^ws_CO_\d{17}/) });
    const { checkoutRequestId } = res.body;
    expect((await getLink(linkId)).status).toBe('PROCESSING');

    // What reached Daraja: whole shillings, our callback URL under PUBLIC_BASE_URL, limits respected.
    const prompt = promptOf(checkoutRequestId);
    expect(prompt.request).toMatchObject({
      BusinessShortCode: '174379', TransactionType: 'CustomerPayBillOnline', Amount: '150', PartyA: phone, PartyB: '174379',
      PhoneNumber: phone, AccountReference: 'ORDER77b',
    });
    expect(prompt.callbackUrl).toMatch(/^http:\/\/malipo\.test\/v1\/callbacks\/mpesa\/[0-9a-z]{40}$/);

    await daraja.complete(checkoutRequestId, 'success');
    expect(prompt.deliveries).toEqual([{ status: 200 }]);
    const link = await eventually(statusIs(linkId, 'CONFIRMED'), 'the link to confirm');
    expect(link).toMatchObject({ confirmedRail: 'MOBILE_MONEY', externalId: prompt.receipt, payer: phone });
    // What was received, in each currency: the KES paid (the documented USDT field stays the USDT total), and each payment's unit.
    expect(link).toMatchObject({ amountReceived: '0', amountsReceived: { USDT: '0', KES: '150' } });
    expect(link.payments).toEqual([expect.objectContaining({ rail: 'MOBILE_MONEY', state: 'confirmed', amount: '150', currency: 'KES' })]);
    expect(Date.parse(link.confirmedAt)).toBeGreaterThan(Date.now() - 60_000);
    const event = await stack.pool.maybeOne(sql.type(z.object({ type: z.string(), data: z.any() }))`
      SELECT type, payload->'data' AS data FROM events WHERE payload->'data'->>'id' = ${linkId}`);
    expect(event?.type).toBe('payment_link.confirmed');
    // The webhook payload carries the same amounts.
    expect(event?.data).toMatchObject({ amountReceived: '0', amountsReceived: { USDT: '0', KES: '150' }, payments: [expect.objectContaining({ currency: 'KES', amount: '150' })] });

    await maybeRecordHistory(stack.temporal.workflow.getHandle(paymentLinkWorkflowId(linkId)), 'payment-link-mpesa-paid');
    // A confirmed link takes no more prompts.
    const again = await pay(linkId, nextPhone());
    expect([again.status, again.body.error.code]).toEqual([409, 'invalid_state']);
  });

  it('goes back to PENDING with a readable reason when the customer cancels, and a new prompt can pay', async () => {
    const linkId = await createLink(20);
    const phone = nextPhone();
    daraja.script(phone, { result: 'cancelled' });
    const first = (await pay(linkId, phone)).body.checkoutRequestId;
    await daraja.complete(first);
    const pending = await eventually(statusIs(linkId, 'PENDING'), 'the link to reopen');
    expect(pending.payments).toEqual([expect.objectContaining({ rail: 'MOBILE_MONEY', state: 'failed', failureReason: 'The customer cancelled the prompt. (M-Pesa 1032)' })]);
    daraja.script(phone, { result: 'success' });
    const second = await pay(linkId, phone);
    expect(second.status).toBe(200);
    expect(second.body.checkoutRequestId).not.toBe(first);
    await daraja.complete(second.body.checkoutRequestId);
    await eventually(statusIs(linkId, 'CONFIRMED'), 'the second prompt to confirm');
    await maybeRecordHistory(stack.temporal.workflow.getHandle(paymentLinkWorkflowId(linkId)), 'payment-link-mpesa-cancelled-then-paid');
  });

  it('is not fooled or moved by duplicate, forged or malformed callbacks', async () => {
    const linkId = await createLink(30);
    const phone = nextPhone();
    daraja.script(phone, { result: 'success', callback: 'duplicate' });
    const { checkoutRequestId } = (await pay(linkId, phone)).body;
    const prompt = promptOf(checkoutRequestId);
    const token = prompt.callbackUrl.split('/').pop()!;
    const body = (id: string, receipt = 'QWE1234567') => ({ Body: { stkCallback: {
      MerchantRequestID: prompt.merchantRequestId, CheckoutRequestID: id, ResultCode: 0, ResultDesc: 'The service request is processed successfully.',
      CallbackMetadata: { Item: [{ Name: 'Amount', Value: 30 }, { Name: 'MpesaReceiptNumber', Value: receipt }, { Name: 'TransactionDate', Value: 20240101120000 }, { Name: 'PhoneNumber', Value: Number(phone) }] },
    } } });
    const post = (t: string, payload: unknown) => stack.request({ method: 'POST', url: `/v1/callbacks/mpesa/${t}`, payload });

    // Forgeries: an unknown token, our token naming another request, a malformed body.
    expect((await post('a'.repeat(40), body(checkoutRequestId))).status).toBe(404);
    expect((await post(token, body('ws_CO_01012000000000000254700000000'))).status).toBe(404);
    expect((await post('short', body(checkoutRequestId))).status).toBe(404);
    const malformed = await post(token, { Body: { stkCallback: { CheckoutRequestID: checkoutRequestId } } });
    expect([malformed.status, malformed.body.error.type]).toEqual([400, 'invalid_request_error']);
    expect(await callbackCount(checkoutRequestId)).toBe(0);
    expect((await getLink(linkId)).status).toBe('PROCESSING');

    // Daraja calls back twice: both acknowledged, one record, one confirmation.
    await daraja.complete(checkoutRequestId);
    expect(prompt.deliveries).toEqual([{ status: 200 }, { status: 200 }]);
    const link = await eventually(statusIs(linkId, 'CONFIRMED'), 'confirmation');
    expect(await callbackCount(checkoutRequestId)).toBe(1);
    expect(link.externalId).toBe(prompt.receipt);
    // A later callback through the right token naming another receipt moves no money and never
    // shows its receipt. Nothing tells which of two unsigned callbacks is genuine, so neither
    // receipt is shown any more: the CheckoutRequestID stands in (mpesa-callback-hints.test.ts).
    const late = await post(token, body(checkoutRequestId, 'ZZZ9999999'));
    expect([late.status, late.body]).toEqual([200, { ResultCode: 0, ResultDesc: 'Accepted' }]);
    const after = await getLink(linkId);
    expect([after.status, after.externalId, after.payments.length]).toEqual(['CONFIRMED', checkoutRequestId, 1]);
  });

});

describe('pay request errors', () => {
  const promptsNow = () => daraja.state.prompts.size;

  it('refuses a badly formed phone number with the expected format, sending nothing', async () => {
    const linkId = await createLink(10);
    const before = promptsNow();
    for (const phone of ['0712345678', '+254712345678', '25471234567', 254712345678, '']) {
      const res = await pay(linkId, phone);
      expect({ phone, status: res.status, param: res.body.error.param }).toEqual({ phone, status: 400, param: 'phoneNumber' });
    }
    const res = await pay(linkId, '0712345678');
    expect(res.body.error.message).toContain("254 followed by nine digits: 12 digits, no '+', no spaces, no leading 0");
    expect(res.body.error.message).toContain('Did you mean 254712345678?');
    expect(promptsNow()).toBe(before);
    expect((await getLink(linkId)).status).toBe('PENDING');
  });

  it("answers 404 for an unknown link, another store's link or the other environment", async () => {
    const linkId = await createLink(10);
    const other = await stack.createStore('Other');
    expect((await pay('pl_' + 'a'.repeat(24), nextPhone())).status).toBe(404);
    expect((await pay('nope', nextPhone())).status).toBe(404);
    expect((await pay(linkId, nextPhone(), other.keys.test.secretKey)).status).toBe(404);
    expect((await pay(linkId, nextPhone(), store.keys.live.secretKey)).status).toBe(404);
  });

  it('answers 400 when the link does not take M-Pesa', async () => {
    const s = await stack.createStore('Crypto only');
    await connectAllRails(stack, s.clientId);
    const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: s.keys.test.secretKey, payload: { enabledRails: ['USDT_TRON'], usdtAmount: '5' } });
    const paid = await pay(res.body.id, nextPhone(), s.keys.test.secretKey);
    expect([paid.status, paid.body.error.code]).toEqual([400, 'rail_not_available']);
    expect(paid.body.error.message).toContain('MOBILE_MONEY is not enabled');
  });

  it('answers 409 while a prompt is already open on that phone', async () => {
    const phone = nextPhone();
    const a = await createLink(10);
    const b = await createLink(11);
    expect((await pay(a, phone)).status).toBe(200);
    const res = await pay(b, phone);
    expect([res.status, res.body.error.code]).toEqual([409, 'prompt_in_progress']);
    expect((await getLink(b)).status).toBe('PENDING');
  });

  it('answers 422 when Daraja no longer accepts the stored credentials', async () => {
    const own: EmulatorMerchant = { ...merchant, consumerKey: 'ck-rotating', shortCode: '174390', passkey: 'passkey-before' };
    daraja.state.merchants.push(own);
    const s = await stack.createStore('Rotated passkey');
    const connected = await stack.request({
      method: 'POST', url: `/v1/merchant/clients/${s.clientId}/mobile-money/connect`, key: s.keys.test.secretKey,
      payload: { consumerKey: own.consumerKey, consumerSecret: own.consumerSecret, shortcode: own.shortCode, passkey: own.passkey, environment: 'sandbox' },
    });
    expect(connected.status).toBe(200);
    own.passkey = 'passkey-after';
    const linkId = await createLink(10, s);
    const res = await pay(linkId, nextPhone(), s.keys.test.secretKey);
    expect([res.status, res.body.error.code]).toEqual([422, 'credentials_rejected']);
    expect(res.body.error.message).toContain('Wrong credentials');
    expect(res.body.error.message).not.toContain('passkey-before');
    expect((await stack.request({ method: 'GET', url: `/v1/payment-links/${linkId}`, key: s.keys.test.secretKey })).body.status).toBe('PENDING');
  });

  it('retries a busy operator, then answers 502 without a prompt when it stays down', async () => {
    const linkId = await createLink(10);
    daraja.failNext(1, 'spike_arrest');
    const before = promptsNow();
    expect((await pay(linkId, nextPhone())).status).toBe(200);
    expect(promptsNow()).toBe(before + 1);

    const down = await createLink(10);
    daraja.failNext(50, 'spike_arrest');
    const res = await pay(down, nextPhone());
    daraja.state.failures.length = 0;
    expect([res.status, res.body.error.code, res.body.error.type]).toEqual([502, 'upstream_failed', 'upstream_error']);
    expect(promptsNow()).toBe(before + 1);
    expect((await getLink(down)).status).toBe('PENDING');
  });

  it('refreshes an invalidated token once and carries on', async () => {
    const linkId = await createLink(10);
    daraja.revokeTokens();
    const from = daraja.requests.length;
    expect((await pay(linkId, nextPhone())).status).toBe(200);
    expect(daraja.requests.slice(from).map((r) => `${r.path} ${r.status}`)).toEqual([
      '/mpesa/stkpush/v1/processrequest 404',
      '/oauth/v1/generate 200',
      '/mpesa/stkpush/v1/processrequest 200',
    ]);
  });

  it('needs a secret key', async () => {
    const linkId = await createLink(10);
    await expectSecretKeyRequired(stack, { method: 'POST', url: `/v1/merchant/payment-links/${linkId}/pay/mobile-money`, payload: { phoneNumber: nextPhone() } });
  });
});

describe('durability', () => {
  it('survives a worker restart between the prompt and the callback', async () => {
    const linkId = await createLink(40);
    const { checkoutRequestId } = (await pay(linkId, nextPhone())).body;
    await stack.workers.shutdown();
    const connection = await NativeConnection.connect({ address: stack.config.temporal.address! });
    const workers = await createWorkers({ connection, namespace: stack.config.temporal.namespace, deps: { pool: stack.pool, config: stack.config, temporal: stack.temporal }, workflowBundle: sharedWorkflowBundle() });
    const running = workers.run();
    restartedWorkers = async () => {
      await workers.shutdown();
      await running;
      await connection.close();
    };
    await daraja.complete(checkoutRequestId);
    await eventually(statusIs(linkId, 'CONFIRMED'), 'confirmation after the restart');
  });
});
