import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { maybeRecordHistory } from '../helpers/histories.js';

/**
 * No activity failure ends a link's workflow: with Daraja unreachable through every check of a
 * prompt (each check's activity exhausting its retries), the workflow keeps asking, backing off,
 * and settles the prompt once Daraja is back. MPESA_QUERY_AFTER_SECONDS=1 keeps it quick.
 */
const merchant = sandboxPaybill('outage-3');
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), MPESA_QUERY_AFTER_SECONDS: '1' });
  store = await stack.createStore('Outage');
  const res = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key: store.keys.test.secretKey, payload: connectBody(merchant) });
  expect(res.status).toBe(200);
});
afterAll(async () => {
  daraja.state.failures.length = 0;
  await stack?.stop();
  await daraja?.close();
});

const queries = () => daraja.requests.filter((r) => r.path === '/mpesa/stkpushquery/v1/query');

describe('Daraja unreachable while a prompt is open', () => {
  it('keeps the workflow alive through every failed check and confirms the payment when Daraja is back', async () => {
    const key = store.keys.test.secretKey;
    const phone = '254711000077';
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 120 } })).body;
    daraja.script(phone, { result: 'success', callback: 'none' });
    const pay = await stack.request({ method: 'POST', url: `/v1/merchant/payment-links/${link.id}/pay/mobile-money`, key, payload: { phoneNumber: phone } });
    expect(pay.status).toBe(200);
    // The customer pays; the callback is lost and Daraja goes down before the first check.
    await daraja.complete(pay.body.checkoutRequestId);
    for (let i = 0; i < 10_000; i++) daraja.state.failures.push({ kind: 'drop_connection' });

    // Long enough for the first checks to exhaust their activity retries (4 attempts each).
    await eventually(async () => (queries().filter((q) => q.status === 0).length >= 8 ? true : undefined), 'eight failed queries', 40_000);
    const handle = stack.temporal.workflow.getHandle(paymentLinkWorkflowId(link.id));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const during = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
    expect(during.status).toBe('PROCESSING');

    daraja.state.failures.length = 0;
    const confirmed = await eventually(async () => {
      const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
      return l.status === 'CONFIRMED' ? l : undefined;
    }, 'CONFIRMED once Daraja is back', 40_000);
    expect(confirmed).toMatchObject({ confirmedRail: 'MOBILE_MONEY', payer: phone });
    expect(confirmed.payments).toEqual([expect.objectContaining({ state: 'confirmed', amount: '120' })]);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await maybeRecordHistory(handle, 'payment-link-mpesa-daraja-outage');
  }, 120_000);
});
