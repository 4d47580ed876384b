import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { updateStorePolicy } from '../../db/store-repo.js';

/**
 * Callbacks get lost. A prompt whose callback never comes is settled by the workflow asking
 * M-Pesa (STK push query) on a backing-off timer; MPESA_QUERY_AFTER_SECONDS=1 keeps it quick.
 */
const merchant = sandboxPaybill('lost-1');
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), MPESA_QUERY_AFTER_SECONDS: '1' });
  store = await stack.createStore('Lost callbacks');
  const res = await stack.request({
    method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key: store.keys.test.secretKey,
    payload: connectBody(merchant),
  });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

async function promptWithoutCallback(phone: string, result: 'success' | 'cancelled') {
  const key = store.keys.test.secretKey;
  const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 90 } })).body;
  daraja.script(phone, { result, callback: 'none' });
  const pay = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
  expect(pay.status).toBe(200);
  await daraja.complete(pay.body.checkoutRequestId);
  return { linkId: link.id as string, checkoutRequestId: pay.body.checkoutRequestId as string };
}

const settled = (id: string, status: string) =>
  eventually(async () => {
    const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key: store.keys.test.secretKey })).body;
    return l.status === status ? l : undefined;
  }, status, 30_000);

describe('a callback claiming success', () => {
  it('moves nothing until the STK query agrees: a forged success on an open prompt is ignored', async () => {
    const key = store.keys.test.secretKey;
    const phone = '254711000003';
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 40 } })).body;
    daraja.script(phone, { result: 'cancelled', callback: 'none' });
    const { checkoutRequestId } = (await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } })).body;
    const prompt = daraja.state.prompts.get(checkoutRequestId)!;
    const token = prompt.callbackUrl.split('/').pop()!;
    // Someone who learned the callback URL claims success while the customer has not paid.
    const forged = await stack.request({
      method: 'POST', url: `/v1/callbacks/mpesa/${token}`,
      payload: { Body: { stkCallback: {
        MerchantRequestID: prompt.merchantRequestId, CheckoutRequestID: checkoutRequestId, ResultCode: 0, ResultDesc: 'The service request is processed successfully.',
        CallbackMetadata: { Item: [{ Name: 'Amount', Value: 40 }, { Name: 'MpesaReceiptNumber', Value: 'FAKE000001' }, { Name: 'TransactionDate', Value: 20260101120000 }, { Name: 'PhoneNumber', Value: Number(phone) }] },
      } } },
    });
    expect(forged.status).toBe(200);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body.status).toBe('PROCESSING');
    // The customer then cancels: the query settles the prompt as failed, never as paid.
    await daraja.complete(checkoutRequestId);
    const settledLink = await settled(link.id, 'PENDING');
    expect(settledLink.confirmedRail).toBeNull();
    expect(settledLink.payments[0].state).toBe('failed');
  });
});

describe('a prompt whose callback never comes', () => {
  it('is confirmed when the STK query says it succeeded', async () => {
    const { linkId, checkoutRequestId } = await promptWithoutCallback('254711000001', 'success');
    const link = await settled(linkId, 'CONFIRMED');
    expect(link).toMatchObject({ confirmedRail: 'MOBILE_MONEY', externalId: checkoutRequestId, payer: '254711000001' });
    expect(link.payments[0]).toMatchObject({ state: 'confirmed', amount: '90' });
    await maybeRecordHistory(stack.temporal.workflow.getHandle(paymentLinkWorkflowId(linkId)), 'payment-link-mpesa-lost-callback');
  });

  it('goes back to PENDING with the reason when the STK query says it failed', async () => {
    const { linkId } = await promptWithoutCallback('254711000002', 'cancelled');
    const link = await settled(linkId, 'PENDING');
    expect(link.payments[0].state).toBe('failed');
    expect(link.payments[0].failureReason).toMatch(/cancel/i);
  });
});

describe('a prompt M-Pesa never gave an outcome for', () => {
  it('is asked about once more before the link closes, and counted when it was paid after all', async () => {
    const key = store.keys.test.secretKey;
    const phone = '254711000004';
    // No late window: the link closes as soon as it is cancelled.
    await updateStorePolicy(stack.pool, store.clientId, 'test', { lateWatchMinutes: 0 });
    try {
      const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 70 } })).body;
      daraja.script(phone, { result: 'success', callback: 'none' });
      const pay = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
      expect(pay.status).toBe(200);
      // Every scheduled query (1, 2, 4, 6 and 10 s here) hears "still being processed": the prompt fails unanswered.
      const failed = await settled(link.id, 'PENDING');
      expect(failed.payments[0]).toMatchObject({ state: 'failed', failureReason: expect.stringMatching(/never reported/) });
      // M-Pesa completes it after all (the customer's payment went through; its callback is lost).
      await daraja.complete(pay.body.checkoutRequestId);
      const cancel = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/cancel`, key });
      expect(cancel.status).toBe(200);
      // The last look before the workflow ends finds the payment; the customer's money is on the books.
      const closed = await eventually(async () => {
        const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
        return l.payments[0]?.state === 'confirmed' ? l : undefined;
      }, 'the unanswered prompt to be counted at the last look', 30_000);
      expect(closed).toMatchObject({ status: 'CANCELLED' });
      expect(closed.payments).toHaveLength(1);
      expect(closed.payments[0]).toMatchObject({ state: 'confirmed', amount: '70', disposition: 'after_cancel' });
      await stack.temporal.workflow.getHandle(paymentLinkWorkflowId(link.id)).result();
    } finally {
      await updateStorePolicy(stack.pool, store.clientId, 'test', { lateWatchMinutes: 1440 });
    }
  }, 90_000);
});
