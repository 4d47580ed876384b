import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { signalDeposits } from '../../activities/chains/signal-deposits.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { handoffFor } from '../../services/payment-links/start-handoff.js';
import { recordDeposit, txHashOf } from '../helpers/deposits.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * The second path to a deposit: a link's workflow reads what was recorded for it, so a deposit
 * never depends on a signal having reached it. Pinned here: a deposit recorded and told while the
 * link's workflow did not exist yet (its start refused), and one recorded with no signal at all.
 */
let stack: Stack;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  // Pulls every 2 s when nothing wakes the workflow (10 minutes by default).
  stack = await startStack({ EVIDENCE_PULL_SECONDS: '2' });
  store = await stack.createStore('Evidence pull');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test');
});
afterAll(async () => stack?.stop());

const usdt18 = (usdt: bigint) => usdt * 10n ** 18n;
const getLink = async (id: string) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const statusIs = (id: string, status: string) => async () => {
  const link = await getLink(id);
  return link.status === status ? link : undefined;
};
const started = async (id: string) =>
  stack.pool.oneFirst(sql.type(z.object({ s: z.boolean() }))`SELECT workflow_started AS s FROM payment_links WHERE id = ${id}`);
const confirmedEvents = async (id: string) =>
  stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM events WHERE dedupe_key = ${`payment_link.confirmed:${id}`}`);
const signalled = async (tag: string) =>
  stack.pool.oneFirst(sql.type(z.object({ s: z.string() }))`SELECT signalled AS s FROM chain_deposits WHERE tx_hash = ${txHashOf(tag)}`);

describe('a deposit recorded before its link’s workflow started', () => {
  it('confirms the link once, with its webhook event, when the workflow starts later', async () => {
    let linkId = '';
    // The workers (and their starter of unstarted links) are down while the link is made and paid.
    await stack.restartWorkers(async () => {
      // One refused start pauses the API's hand-off for a second: the next link is left unstarted.
      handoffFor({ pool: stack.pool }).offer('pl_refused', async () => false);
      await new Promise((r) => setTimeout(r, 50));
      const res = await stack.request({
        method: 'POST', url: '/v1/payment-links', key,
        payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'], expiresInMinutes: 1 },
      });
      expect(res.status).toBe(201);
      linkId = res.body.id;
      expect(await started(linkId)).toBe(false);

      // The watcher records 10 USDT at depth and tells the owner: there is no workflow to tell.
      await recordDeposit(stack, { linkId, storeId: store.clientId, rail: 'USDT_BSC', to: res.body.bscAddress, tag: 'early-1', amountMinor: usdt18(10n), decimals: 18, state: 'confirmed' });
      const told = await signalDeposits({ pool: stack.pool, temporal: stack.temporal, dispatchEvent: async () => undefined }, 'USDT_BSC', 'test', 200n);
      expect(told).toBe(1);
      expect(await signalled('early-1')).toBe('confirmed');
    });

    // The workers' starter starts the workflow; it reads the deposit recorded for it.
    const link = await eventually(statusIs(linkId, 'CONFIRMED'), 'the early deposit to confirm the link', 30_000);
    expect(link).toMatchObject({ amountReceived: '10' });
    expect(link.payments).toHaveLength(1);
    expect(link.payments[0]).toMatchObject({ amount: '10', state: 'confirmed', disposition: 'payment' });
    expect(await confirmedEvents(linkId)).toBe(1);
  });
});

describe('a deposit no signal ever named', () => {
  it('is found by the workflow’s own pull and counted once', async () => {
    const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '3', enabledRails: ['USDT_BSC'] } });
    expect(res.status).toBe(201);
    await stack.workflowStarted(res.body.id);
    // Recorded, never signalled (a hint lost, a watcher that died between the two).
    await recordDeposit(stack, { linkId: res.body.id, storeId: store.clientId, rail: 'USDT_BSC', to: res.body.bscAddress, tag: 'silent-1', amountMinor: usdt18(1n), decimals: 18, state: 'seen' });
    await eventually(statusIs(res.body.id, 'PROCESSING'), 'the silent deposit to be seen');
    await recordDeposit(stack, { linkId: res.body.id, storeId: store.clientId, rail: 'USDT_BSC', to: res.body.bscAddress, tag: 'silent-2', amountMinor: usdt18(2n), decimals: 18, state: 'confirmed' });
    await stack.pool.query(sql.unsafe`UPDATE chain_deposits SET state = 'confirmed' WHERE tx_hash = ${txHashOf('silent-1')}`);
    const link = await eventually(statusIs(res.body.id, 'CONFIRMED'), 'both silent deposits to confirm the link');
    expect(link).toMatchObject({ amountReceived: '3' });
    expect(link.payments).toHaveLength(2);
    expect(await confirmedEvents(res.body.id)).toBe(1);
  });

  it('that does not fit the link (another address) is never counted', async () => {
    const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: ['USDT_BSC'] } });
    expect(res.status).toBe(201);
    await stack.workflowStarted(res.body.id);
    await recordDeposit(stack, { linkId: res.body.id, storeId: store.clientId, rail: 'USDT_BSC', to: '0x00000000000000000000000000000000000000b0', tag: 'misfit-1', amountMinor: usdt18(1n), decimals: 18, state: 'confirmed' });
    // Two pulls later nothing has changed.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await getLink(res.body.id)).toMatchObject({ status: 'PENDING', amountReceived: '0', payments: [] });
  });
});
