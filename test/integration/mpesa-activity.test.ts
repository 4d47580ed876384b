import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { createMobileMoneyActivities } from '../../activities/mpesa/index.js';
import { openMerchantSession } from '../../rails/mpesa/merchant-session.js';
import { reencryptAllCredentials } from '../../services/mpesa/reencrypt.js';
import { findStkRequest } from '../../db/mpesa-repo.js';
import { hashCallbackToken } from '../../rails/mpesa/callback-token.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { loadConfig } from '../../config/config.js';
import { startDarajaEmulator, type DarajaEmulator, type EmulatorMerchant } from '../../emulators/daraja/server.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

const merchant: EmulatorMerchant = {
  consumerKey: 'ck-act-0001', consumerSecret: 'cs-act-0002', shortCode: '174379',
  passkey: 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919', kind: 'paybill',
};
const keyA = generateKey('keyA');
const keyB = generateKey('keyB');

let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let linkId: string;
let activities: ReturnType<typeof createMobileMoneyActivities>;
let phoneSeq = 0;
const nextPhone = () => `2541${String(++phoneSeq).padStart(8, '0')}`;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(keyA) });
  store = await stack.createStore('Activities');
  const key = store.keys.test.secretKey;
  const connected = await stack.request({
    method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key,
    payload: { consumerKey: merchant.consumerKey, consumerSecret: merchant.consumerSecret, shortcode: '174379', passkey: merchant.passkey, environment: 'sandbox' },
  });
  expect(connected.status).toBe(200);
  linkId = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 75 } })).body.id;
  activities = createMobileMoneyActivities({ pool: stack.pool, config: stack.config });
});
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

const input = (attempt: string, phoneNumber = nextPhone()) => ({
  linkId, storeId: store.clientId, environment: 'test' as const, phoneNumber, amountKes: 75, accountReference: linkId, description: 'Order 75', attempt,
});
const pushes = () => daraja.requests.filter((r) => r.path === '/mpesa/stkpush/v1/processrequest');
/** The callback token Daraja was given for a prompt: the last segment of its CallBackURL. */
const tokenOf = (checkoutRequestId: string) => daraja.state.prompts.get(checkoutRequestId)!.callbackUrl.split('/').pop()!;

describe('sendStkPush', () => {
  it('sends one prompt per (link, attempt): a retry returns the recorded result', async () => {
    const before = pushes().length;
    const first = await activities.sendStkPush(input('a1'));
    const again = await activities.sendStkPush(input('a1'));
    expect(again).toEqual(first);
    // The result lands in Temporal's history: the prompt's ids only, never the callback token.
    expect(Object.keys(first).sort()).toEqual(['checkoutRequestId', 'merchantRequestId']);
    // Daraja got the token in the CallBackURL; the database keeps only its SHA-256.
    const token = tokenOf(first.checkoutRequestId);
    expect(token).toMatch(/^[0-9a-z]{40}$/);
    expect((await findStkRequest(stack.pool, linkId, 'a1'))!.callback_token_hash).toEqual(hashCallbackToken(token));
    expect(pushes().length).toBe(before + 1);
    // The token cached at connect time served the push: no new OAuth call.
    expect(daraja.requests.filter((r) => r.path === '/oauth/v1/generate')).toHaveLength(1);
    expect(await findStkRequest(stack.pool, linkId, 'a1')).toMatchObject({ state: 'sent', checkout_request_id: first.checkoutRequestId });
  });

  it('never resends a prompt whose answer was lost', async () => {
    daraja.failNext(1, 'lose_answer', '/mpesa/stkpush/v1/processrequest');
    const before = pushes().length;
    await expect(activities.sendStkPush(input('a2'))).rejects.toMatchObject({ type: 'MpesaOutcomeUnknown', nonRetryable: true });
    await expect(activities.sendStkPush(input('a2'))).rejects.toMatchObject({ type: 'MpesaOutcomeUnknown' });
    expect(pushes().length).toBe(before + 1);
    // If Daraja did take it, its callback (through our token) binds the CheckoutRequestID after all.
    const prompt = [...daraja.state.prompts.values()].at(-1)!;
    const res = await stack.request({
      method: 'POST', url: `/v1/callbacks/mpesa/${tokenOf(prompt.checkoutRequestId)}`,
      payload: { Body: { stkCallback: { MerchantRequestID: 'm-1', CheckoutRequestID: prompt.checkoutRequestId, ResultCode: 1037, ResultDesc: 'DS timeout user cannot be reached' } } },
    });
    expect(res.status).toBe(200);
    expect(await findStkRequest(stack.pool, linkId, 'a2')).toMatchObject({ state: 'sent', checkout_request_id: prompt.checkoutRequestId });
    // The callback is a hint: the link's workflow settles the prompt with an STK query of its own.
    await eventually(async () => (daraja.requests.some((r) => r.path === '/mpesa/stkpushquery/v1/query') ? true : undefined), 'the workflow to query the prompt');
  });

  it('retries after a busy answer (nothing was started) and records refusals for replay', async () => {
    // For the push only: the previous test's workflow may still be querying its prompt.
    daraja.failNext(1, 'spike_arrest', '/mpesa/stkpush/v1/processrequest');
    await expect(activities.sendStkPush(input('a3'))).rejects.toMatchObject({ type: 'MpesaUnavailable', nonRetryable: false });
    expect(await findStkRequest(stack.pool, linkId, 'a3')).toBeNull();
    expect((await activities.sendStkPush(input('a3'))).checkoutRequestId).toMatch(/^ws_CO_/);

    const phone = nextPhone();
    await activities.sendStkPush(input('a4', phone));
    const before = pushes().length;
    await expect(activities.sendStkPush(input('a5', phone))).rejects.toMatchObject({ type: 'MpesaSubscriberBusy', nonRetryable: true });
    await expect(activities.sendStkPush(input('a5', phone))).rejects.toMatchObject({ type: 'MpesaSubscriberBusy' });
    expect(pushes().length).toBe(before + 1);
  });

  it('mints a new token when the cached one has expired', async () => {
    await stack.pool.query(sql.unsafe`UPDATE mobile_money_tokens SET expires_at = now() - interval '1 minute' WHERE store_id = ${store.clientId}`);
    const from = daraja.requests.length;
    await activities.sendStkPush(input('a6'));
    // The stack's workflows may query their own prompts meanwhile (minting under the same lock,
    // so at most one token is minted between them): only this push's calls are compared.
    const calls = daraja.requests.slice(from).map((r) => r.path).filter((p) => p !== '/mpesa/stkpushquery/v1/query');
    expect(calls).toEqual(['/oauth/v1/generate', '/mpesa/stkpush/v1/processrequest']);
    const expires = await stack.pool.oneFirst(sql.type(z.object({ e: z.string() }))`SELECT expires_at AS e FROM mobile_money_tokens WHERE store_id = ${store.clientId}`);
    expect(Date.parse(expires)).toBeGreaterThan(Date.now() + 3000_000);
  });

  it('mints one token for concurrent calls after expiry (Daraja keeps one per app: a second mint would void the first)', async () => {
    const sent = await Promise.all(['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((a) => activities.sendStkPush(input(a))));
    await stack.pool.query(sql.unsafe`UPDATE mobile_money_tokens SET expires_at = now() - interval '1 minute' WHERE store_id = ${store.clientId}`);
    const from = daraja.requests.length;
    const answers = await Promise.all(sent.map((s) => activities.queryStkPush({ linkId, checkoutRequestId: s.checkoutRequestId })));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill('pending'));
    const calls = daraja.requests.slice(from);
    expect(calls.filter((r) => r.path === '/oauth/v1/generate')).toHaveLength(1);
    // No call was refused for its token (a 404 here is "Invalid Access Token").
    expect(calls.filter((r) => r.status === 404)).toEqual([]);
  });

  it('refuses input that can never succeed', async () => {
    await expect(activities.sendStkPush({ ...input('a7'), phoneNumber: '0712345678' })).rejects.toMatchObject({ type: 'MpesaInvalidInput' });
    await expect(activities.sendStkPush({ ...input('a7'), amountKes: 0 })).rejects.toMatchObject({ type: 'MpesaInvalidInput' });
    await expect(activities.sendStkPush({ ...input('a7'), storeId: 'cli_unknown', environment: 'live' })).rejects.toMatchObject({ type: 'MpesaNotConnected' });
  });
});

describe('queryStkPush', () => {
  it('reports pending, then the final result, with the merchant credentials', async () => {
    const sent = await activities.sendStkPush(input('q1'));
    const q = { linkId, checkoutRequestId: sent.checkoutRequestId };
    expect(await activities.queryStkPush(q)).toEqual({ status: 'pending', resultCode: null, reason: null });
    daraja.script(daraja.state.prompts.get(sent.checkoutRequestId)!.phone, { result: 'wrong_pin', callback: 'none' });
    await daraja.complete(sent.checkoutRequestId);
    expect(await activities.queryStkPush(q)).toEqual({ status: 'failed', resultCode: '2001', reason: 'The M-Pesa PIN entered was wrong. (M-Pesa 2001)' });

    const paid = await activities.sendStkPush(input('q2'));
    daraja.script(daraja.state.prompts.get(paid.checkoutRequestId)!.phone, { result: 'success', callback: 'none' });
    await daraja.complete(paid.checkoutRequestId);
    expect(await activities.queryStkPush({ linkId, checkoutRequestId: paid.checkoutRequestId })).toMatchObject({ status: 'succeeded', resultCode: '0' });
    await expect(activities.queryStkPush({ linkId: 'pl_other', checkoutRequestId: paid.checkoutRequestId })).rejects.toMatchObject({ type: 'MpesaInvalidInput' });
  });
});

describe('credentials:reencrypt', () => {
  const ciphertexts = () => stack.pool.one(sql.type(z.object({ all: z.string() }))`
    SELECT c.consumer_key_enc || ' ' || c.consumer_secret_enc || ' ' || c.passkey_enc || ' ' || t.token_enc AS all
    FROM mobile_money_connections c JOIN mobile_money_tokens t USING (store_id, environment) WHERE c.store_id = ${store.clientId}`);

  it('moves every credential and token to the new key; the old key can then go', async () => {
    expect((await ciphertexts()).all.match(/v1:keyA:/g)).toHaveLength(4);
    const rotating = loadConfig({ DATA_DIR: '/nonexistent-malipo-test-dir', MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: `${formatKeyEntry(keyB)},${formatKeyEntry(keyA)}` });
    expect(await reencryptAllCredentials(stack.pool, rotating)).toEqual({ currentKeyId: 'keyB', reencrypted: 1, alreadyCurrent: 0, failed: [] });
    expect((await ciphertexts()).all.match(/v1:keyB:/g)).toHaveLength(4);
    expect(await reencryptAllCredentials(stack.pool, rotating)).toMatchObject({ reencrypted: 0, alreadyCurrent: 1 });

    const onlyB = loadConfig({ DATA_DIR: '/nonexistent-malipo-test-dir', MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(keyB) });
    const session = await openMerchantSession({ pool: stack.pool, config: onlyB }, store.clientId, 'test');
    expect(session.passkey).toBe(merchant.passkey);
    const sent = await createMobileMoneyActivities({ pool: stack.pool, config: onlyB }).sendStkPush(input('r1'));
    expect(sent.checkoutRequestId).toMatch(/^ws_CO_/);
    // Without the key it was encrypted under, the activity fails clearly instead of guessing.
    const onlyA = loadConfig({ DATA_DIR: '/nonexistent-malipo-test-dir', MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(keyA) });
    await expect(createMobileMoneyActivities({ pool: stack.pool, config: onlyA }).sendStkPush(input('r2')))
      .rejects.toMatchObject({ type: 'MpesaCredentialsUnreadable', message: expect.stringContaining("key id 'keyB'") });
  });
});
