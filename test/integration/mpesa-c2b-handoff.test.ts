import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { recordC2bPayment } from '../../db/mpesa-c2b-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { tellUntoldC2bPayments } from '../../services/mpesa/c2b-handoff.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * A C2B confirmation stored, then the process died (or Temporal was away) before the link's
 * workflow was told: Daraja does not post it again, so the workers tell the link from the stored
 * row (services/mpesa/c2b-handoff.ts), and the link counts it once.
 */
const merchant = sandboxPaybill('handoff-1');
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()) });
  store = await stack.createStore('Handoff');
  key = store.keys.test.secretKey;
  expect((await stack.request({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, key, payload: connectBody(merchant) })).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

/** What the confirmation route stores before it tells the link (the crash comes right after). */
const storeOnly = (linkId: string, ref: string, transId: string, amount: string) =>
  recordC2bPayment(stack.pool, {
    store_id: store.clientId, environment: 'test', shortcode: merchant.shortCode, trans_id: transId, transaction_type: 'Pay Bill',
    trans_time: '20261128120000', amount, bill_ref: ref, account_ref: ref, link_id: linkId, msisdn: '25470****149', payer_name: 'John',
    state: 'matched', fingerprint: `${transId}:${amount}:${ref}`, body: { TransID: transId, TransAmount: amount, BillRefNumber: ref },
  });
const backdate = (transId: string) => stack.pool.query(sql.unsafe`UPDATE mpesa_c2b_payments SET received_at = now() - interval '1 minute' WHERE trans_id = ${transId}`);

describe('a C2B confirmation stored but never handed to its link', () => {
  it('is told to the link by the workers, which confirms it and counts it once', async () => {
    const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 500 } });
    expect(res.status).toBe(201);
    const link = res.body as { id: string; mobileMoneyAccountRef: string };
    await stack.workflowStarted(link.id);

    await storeOnly(link.id, link.mobileMoneyAccountRef, 'TK81HANDOFF1', '500.00');
    // Within the grace period the request that stored it is not raced.
    expect(await tellUntoldC2bPayments({ pool: stack.pool, temporal: stack.temporal, config: stack.config })).toEqual({ told: 0, failed: 0 });
    await backdate('TK81HANDOFF1');

    const done = await eventually(async () => {
      const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
      return l.status === 'CONFIRMED' ? l : undefined;
    }, 'CONFIRMED from the stored confirmation', 30_000);
    expect(done).toMatchObject({ externalId: 'TK81HANDOFF1', amountsReceived: { KES: '500' } });
    expect(done.payments).toHaveLength(1);
    // Counted: nothing left to tell, however often the workers look.
    expect(await tellUntoldC2bPayments({ pool: stack.pool, temporal: stack.temporal, config: stack.config })).toEqual({ told: 0, failed: 0 });
  });
});
