import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { createLinkActivities } from '../../activities/links/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { linkState, paymentConfirmed, paymentLinkWorkflowId, paymentSeen, type PaymentReport } from '../../domain/workflow-contract.js';
import { recordDeposit } from '../helpers/deposits.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * A signal is a hint, never proof: anyone who reaches the Temporal frontend or UI can send one.
 * The link confirms only what an activity verified against recorded evidence (the deposit row
 * the chain watcher wrote: its link, rail, address, units, amount and depth), and a simulated
 * payment is impossible on a live link at every layer.
 */
let stack: Stack;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Evidence');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test');
  await connectAllRails(stack, store.clientId, 'live');
});
afterAll(async () => stack?.stop());

const usdt18 = (usdt: bigint) => usdt * 10n ** 18n;
const createLink = async (payload: Record<string, unknown>, k = key) => {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: k, payload });
  expect(res.status).toBe(201);
  await stack.workflowStarted(res.body.id); // signalled and queried directly below
  return res.body as { id: string; bscAddress: string };
};
const getLink = async (id: string, k = key) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key: k })).body;
const handle = (id: string) => stack.temporal.workflow.getHandle(paymentLinkWorkflowId(id));
const statusIs = (id: string, status: string) => async () => {
  const l = await getLink(id);
  return l.status === status ? l : undefined;
};
/** Waits until the workflow has handled every signal sent so far (its inbox drains between queries). */
const settle = () => new Promise((r) => setTimeout(r, 1_500));

const forged = (k: string, usdt: bigint): PaymentReport => ({
  rail: 'USDT_BSC', key: k, externalId: `0x${'f'.repeat(64)}`, payer: '0x00000000000000000000000000000000000000ff', amountMinor: String(usdt18(usdt)), decimals: 18, blockNumber: 1,
});

describe('a chain signal', () => {
  it('without a recorded deposit confirms nothing', async () => {
    const link = await createLink({ usdtAmount: '5', enabledRails: ['USDT_BSC'] });
    await handle(link.id).signal(paymentSeen, forged(`0x${'1'.repeat(64)}:0`, 5n));
    await handle(link.id).signal(paymentConfirmed, forged(`0x${'1'.repeat(64)}:0`, 5n));
    await settle();
    const l = await getLink(link.id);
    expect(l).toMatchObject({ status: 'PENDING', amountReceived: '0', payments: [] });
    expect((await handle(link.id).query(linkState)).payments).toEqual([]);
  });

  it('counts the recorded deposit, not what the signal claims', async () => {
    const link = await createLink({ usdtAmount: '5', enabledRails: ['USDT_BSC'] });
    const recorded = await recordDeposit(stack, { linkId: link.id, storeId: store.clientId, rail: 'USDT_BSC', to: link.bscAddress, tag: 'ev-2', amountMinor: usdt18(2n), decimals: 18, state: 'confirmed' });
    // The signal claims 1,000 USDT from someone else; the row says 2 USDT.
    await handle(link.id).signal(paymentConfirmed, { ...forged(recorded.key, 1000n), payer: '0x0000000000000000000000000000000000000bad' });
    const l = await eventually(async () => {
      const got = await getLink(link.id);
      return got.payments.length === 1 ? got : undefined;
    }, 'the recorded payment');
    expect(l).toMatchObject({ status: 'PENDING', amountReceived: '2' });
    expect(l.payments[0]).toMatchObject({ amount: '2', disposition: 'underpaid', state: 'confirmed' });

    const rest = await recordDeposit(stack, { linkId: link.id, storeId: store.clientId, rail: 'USDT_BSC', to: link.bscAddress, tag: 'ev-3', amountMinor: usdt18(3n), decimals: 18, state: 'confirmed' });
    await handle(link.id).signal(paymentConfirmed, rest);
    const done = await eventually(statusIs(link.id, 'CONFIRMED'), 'CONFIRMED by recorded deposits');
    expect(done).toMatchObject({ amountReceived: '5', payer: '0x00000000000000000000000000000000000000aa' });
  });

  it('for a deposit only seen (not at depth) moves the link to PROCESSING, never to CONFIRMED', async () => {
    const link = await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] });
    const seen = await recordDeposit(stack, { linkId: link.id, storeId: store.clientId, rail: 'USDT_BSC', to: link.bscAddress, tag: 'ev-4', amountMinor: usdt18(1n), decimals: 18, state: 'seen' });
    await handle(link.id).signal(paymentConfirmed, seen);
    await eventually(statusIs(link.id, 'PROCESSING'), 'PROCESSING');
    await settle();
    expect((await getLink(link.id)).status).toBe('PROCESSING');
  });

  it('naming a deposit to another address, or another link’s deposit, confirms nothing', async () => {
    const link = await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] });
    const other = await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] });
    const elsewhere = await recordDeposit(stack, { linkId: link.id, storeId: store.clientId, rail: 'USDT_BSC', to: other.bscAddress, tag: 'ev-5', amountMinor: usdt18(1n), decimals: 18, state: 'confirmed' });
    const othersDeposit = await recordDeposit(stack, { linkId: other.id, storeId: store.clientId, rail: 'USDT_BSC', to: other.bscAddress, tag: 'ev-6', amountMinor: usdt18(1n), decimals: 18, state: 'seen' });
    await handle(link.id).signal(paymentConfirmed, elsewhere);
    await handle(link.id).signal(paymentConfirmed, othersDeposit);
    await settle();
    expect(await getLink(link.id)).toMatchObject({ status: 'PENDING', payments: [] });
  });

  it('that is malformed is ignored, and the workflow goes on counting real deposits', async () => {
    const link = await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] });
    await handle(link.id).signal(paymentSeen, null as never);
    await handle(link.id).signal(paymentConfirmed, { rail: 'USDT_BSC', key: 42 } as never);
    const real = await recordDeposit(stack, { linkId: link.id, storeId: store.clientId, rail: 'USDT_BSC', to: link.bscAddress, tag: 'ev-7', amountMinor: usdt18(1n), decimals: 18, state: 'confirmed' });
    await handle(link.id).signal(paymentConfirmed, real);
    await eventually(statusIs(link.id, 'CONFIRMED'), 'CONFIRMED after malformed signals');
  });
});

describe('simulated payments', () => {
  it('cannot be claimed by a signal, even on a test link', async () => {
    const link = await createLink({ usdtAmount: '1', enabledRails: ['MOBILE_MONEY', 'USDT_BSC'] });
    await handle(link.id).signal(paymentConfirmed, { rail: 'MOBILE_MONEY', key: 'sim_forged', externalId: 'SIMFAKE', payer: '254700000000', amountMinor: '130', decimals: 0, simulated: true });
    await handle(link.id).signal(paymentConfirmed, { ...forged('sim_forged2', 1n), simulated: true });
    await settle();
    expect(await getLink(link.id)).toMatchObject({ status: 'PENDING', payments: [] });
  });

  it('are refused on a live link by the API, the activity and the database', async () => {
    const live = store.keys.live.secretKey;
    const link = await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] }, live);
    const api = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/simulate-payment`, key: live, payload: { rail: 'USDT_BSC' } });
    expect(api.status).toBe(403);
    const activities = createLinkActivities({ pool: stack.pool, config: stack.config });
    const report = { ...forged('sim_live', 1n), simulated: true };
    await expect(activities.confirmLink({ linkId: link.id, report, from: ['PENDING'], disposition: 'payment', receivedMicro: '1000000', confirmedAt: new Date().toISOString() }))
      .rejects.toMatchObject({ type: 'SimulatedOnLive', nonRetryable: true });
    await expect(activities.recordPayment({ linkId: link.id, report, state: 'confirmed', disposition: 'payment' })).rejects.toMatchObject({ type: 'SimulatedOnLive' });
    await expect(stack.pool.query(sql.unsafe`UPDATE payment_links SET simulated = true WHERE id = ${link.id}`)).rejects.toMatchObject({ constraint: 'payment_links_simulated_test_only' });
    expect(await getLink(link.id, live)).toMatchObject({ status: 'PENDING', simulated: false, payments: [] });
  });
});
