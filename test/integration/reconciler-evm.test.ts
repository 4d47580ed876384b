import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { type Address } from 'viem';
import { z } from 'zod';
import { createReconciliationActivities } from '../../activities/reconciliation/index.js';
import { railSettingsFrom } from '../../config/rail-settings.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { reconcilerWorkflowId, workflowTypes, type ReconcilerInput } from '../../domain/workflow-contract.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startFlakyRpc, type FlakyRpc, type RpcAnswer } from '../helpers/flaky-rpc.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { deployMulticall3 } from '../helpers/multicall.js';
import { httpCall } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { encryptionEnv, loopbackWebhooks } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The independent reconciler on a real chain (anvil), a real PostgreSQL and the real workers.
 * The only provider the watcher has hides one transfer's log for good while `balanceOf` shows the
 * money: the reconciler reports it (a finding and a `reconciliation.mismatch` webhook), and once an
 * honest second provider is configured it records the deposit, which the watcher confirms and the
 * link's workflow turns into a confirmed payment.
 */
let anvil: Anvil;
let usdt: TestToken;
let payer: Address;
let hider: FlakyRpc;
let stack: Stack;
let store: CreatedStore;
let key: string;
let receiver: WebhookReceiver;
let endpointSecret: string;

const usdt18 = (n: bigint) => n * 10n ** 18n;
const mine = (blocks: number) => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
const railEnv = () => ({ USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CONFIRMATIONS_USDT_BSC: '3', CHAIN_ID_USDT_BSC_TEST: String(anvil.chainId) });

/** Every `eth_getLogs` answer loses the transfers to `to`: a provider hiding one payment for good. */
function hideTransfersTo(rpc: FlakyRpc, to: Address): () => void {
  const topic = `0x${'0'.repeat(24)}${to.slice(2).toLowerCase()}`;
  return rpc.fail({
    method: 'eth_getLogs',
    fault: { rewrite: (a: RpcAnswer) => ({ ...a, result: (a.result as { topics: string[] }[]).filter((l) => l.topics[2]?.toLowerCase() !== topic) }) },
  });
}

/** The reconciler's activities as a worker with this RPC list would run them. */
function reconcilerWith(rpcUrls: string) {
  const config = { ...stack.config, rails: railSettingsFrom({ ...railEnv(), RPC_URL_USDT_BSC_TEST: rpcUrls }) };
  return createReconciliationActivities({ pool: stack.pool, config, temporal: stack.temporal });
}

const findingsOf = (address: string) =>
  stack.pool.any(sql.type(z.object({ id: z.string(), kind: z.string(), status: z.string(), balance_minor: z.string(), recorded_minor: z.string(), difference_minor: z.string() }))`
    SELECT id, kind, status, balance_minor::text, recorded_minor::text, difference_minor::text FROM reconciliation_findings
    WHERE lower(address) = ${address.toLowerCase()} ORDER BY created_at`);
const eventsOfType = (type: string) =>
  stack.pool.anyFirst(sql.type(z.object({ payload: z.any() }))`SELECT payload FROM events WHERE store_id = ${store.clientId} AND type = ${type} ORDER BY created_at`);
const depositsTo = (address: string) =>
  stack.pool.any(sql.type(z.object({ tx_hash: z.string(), state: z.string(), owner_id: z.string() }))`
    SELECT tx_hash, state, owner_id FROM chain_deposits WHERE lower(to_address) = ${address.toLowerCase()}`);

/**
 * Waits until the watcher's cursor (the height the reconciler reads balances at, at most) has
 * passed `block`: below it, a deposit the watcher has not read yet is no mismatch.
 */
async function watcherPast(block: bigint): Promise<void> {
  await eventually(async () => {
    const cursor = await stack.pool.maybeOneFirst(sql.type(z.object({ n: z.string() }))`
      SELECT block_number::text AS n FROM chain_cursors WHERE rail = 'USDT_BSC' AND environment = 'test'`);
    return cursor !== null && BigInt(cursor) >= block ? true : undefined;
  }, `the watcher to pass block ${block}`, 30_000);
}
const lastBlock = async (tx: `0x${string}`) => (await anvil.publicClient.getTransactionReceipt({ hash: tx })).blockNumber;

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  payer = anvil.accounts[1]!;
  await usdt.mint(payer, 10n ** 30n);
  // As on every public EVM network: balances are read through the deployed Multicall3.
  await deployMulticall3(anvil);
  hider = await startFlakyRpc(anvil.url);
  stack = await startStack({
    ...loopbackWebhooks,
    ...encryptionEnv(),
    ...railEnv(),
    CHAIN_WATCHERS: 'on',
    CHAIN_POLL_MS: '100',
    RPC_URL_USDT_BSC_TEST: hider.url,
    WEBHOOK_RETRY_SCALE: '0.001',
  });
  store = await stack.createStore('Reconciled shop');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test');
  receiver = await WebhookReceiver.start();
  const ep = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/hooks') } });
  expect(ep.status).toBe(201);
  endpointSecret = ep.body.secret;
}, 120_000);
afterEach(() => hider.clear());
afterAll(async () => {
  await stack?.stop();
  await hider?.close();
  await receiver?.down();
  await anvil?.stop();
});

describe('reconciler (EVM, anvil)', () => {
  it('reports a transfer the only provider hides for good, then confirms the payment once an honest second provider is added', async () => {
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'] } })).body;
    const address = link.bscAddress as Address;
    hideTransfersTo(hider, address);
    const tx = await usdt.transfer(payer, address, usdt18(10n));
    const paidAt = await lastBlock(tx);
    await mine(5);
    // The watcher has passed the payment's block and recorded nothing: its only provider hid it.
    await watcherPast(paidAt);
    expect(await depositsTo(address)).toEqual([]);
    expect(await usdt.balanceOf(address)).toBe(usdt18(10n));

    // The scheduled workflow's first run, on the worker's configuration (the hiding provider only).
    const handle = await stack.temporal.workflow.start(workflowTypes.reconciler, {
      workflowId: reconcilerWorkflowId(stack.config.temporal.taskQueuePrefix),
      taskQueue: `${stack.config.temporal.taskQueuePrefix}chains`,
      args: [{ everyMs: 60 * 60_000, pageSize: 50 }] satisfies [ReconcilerInput],
    });
    const [finding] = await eventually(async () => {
      const rows = await findingsOf(address);
      return rows.length ? rows : undefined;
    }, 'a reconciliation finding', 30_000);
    expect(finding).toMatchObject({ kind: 'mismatch', status: 'open', balance_minor: String(usdt18(10n)), recorded_minor: '0', difference_minor: String(usdt18(10n)) });

    await receiver.waitFor(() => receiver.requestsTo('/hooks').length >= 1, 'reconciliation.mismatch');
    await handle.terminate('the test drives the next runs itself');
    const delivered = verifyWebhook(endpointSecret, receiver.requestsTo('/hooks')[0]!) as Record<string, any>;
    expect(delivered).toMatchObject({
      type: 'reconciliation.mismatch',
      environment: 'test',
      data: {
        id: finding!.id, kind: 'mismatch', status: 'open', network: 'BSC', address: address.toLowerCase(),
        owner: { type: 'payment_link', id: link.id, index: null }, balance: '10', recorded: '0', expected: '0', difference: '10',
      },
    });

    // The same mismatch, seen again, is not reported again.
    await reconcilerWith(hider.url).reconcilePage({ rail: 'USDT_BSC', environment: 'test', after: null });
    expect(await eventsOfType('reconciliation.mismatch')).toHaveLength(1);
    expect(await findingsOf(address)).toHaveLength(1);

    // An honest second provider: the rescan finds the transfer there (the hider's receipt vouches for it).
    const page = await reconcilerWith(`${hider.url},${anvil.url}`).reconcilePage({ rail: 'USDT_BSC', environment: 'test', after: null });
    expect(page).toMatchObject({ rescanned: 1, recovered: 1, mismatches: 0 });
    expect(await depositsTo(address)).toEqual([{ tx_hash: tx, state: expect.stringMatching(/^(seen|confirmed)$/), owner_id: link.id }]);
    expect((await findingsOf(address))[0]).toMatchObject({ id: finding!.id, status: 'resolved' });

    // The watcher confirms the recorded deposit at depth and the link's workflow confirms the payment, once.
    await mine(3);
    const confirmed = await eventually(async () => {
      const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
      return l.status === 'CONFIRMED' ? l : undefined;
    }, 'the link to confirm', 60_000);
    expect(confirmed).toMatchObject({ confirmedRail: 'USDT_BSC', externalId: tx, amountReceived: '10' });
    await receiver.waitFor(() => receiver.requestsTo('/hooks').some((r) => JSON.parse(r.body).type === 'payment_link.confirmed'), 'payment_link.confirmed');
    expect(await depositsTo(address)).toEqual([{ tx_hash: tx, state: 'confirmed', owner_id: link.id }]);
    expect(await eventsOfType('payment_link.confirmed')).toHaveLength(1);
  }, 180_000);

  it('finds nothing when balances match the ledger', async () => {
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '3', enabledRails: ['USDT_BSC'] } })).body;
    await usdt.transfer(payer, link.bscAddress, usdt18(3n));
    await mine(4);
    await eventually(async () => ((await depositsTo(link.bscAddress)).some((d) => d.state === 'confirmed') ? true : undefined), 'the watcher to confirm', 30_000);
    const before = (await eventsOfType('reconciliation.mismatch')).length;
    const page = await reconcilerWith(hider.url).reconcilePage({ rail: 'USDT_BSC', environment: 'test', after: null });
    expect(page.rescanned).toBe(0);
    expect(await findingsOf(link.bscAddress)).toEqual([]);
    expect(await eventsOfType('reconciliation.mismatch')).toHaveLength(before);
    // A steady run rewrites nothing (a row changes when its balance does, or once a day).
    const memory = () => stack.pool.anyFirst(sql.type(z.object({ r: z.string() }))`
      SELECT address || ' ' || checked_at::text || ' ' || coalesce(matched_block::text, '-') AS r FROM reconciliation_addresses ORDER BY address`);
    const was = await memory();
    expect((await reconcilerWith(hider.url).reconcilePage({ rail: 'USDT_BSC', environment: 'test', after: null })).checked).toBe(was.length);
    expect(await memory()).toEqual(was);
  }, 60_000);

  it('notes an outflow (the merchant swept the address) without a webhook, and still reports a later hidden deposit', async () => {
    const link = (await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '4', enabledRails: ['USDT_BSC'] } })).body;
    const address = link.bscAddress as Address;
    // anvil lets the test send from the address as the merchant would with their own key.
    await anvil.rpc('anvil_impersonateAccount', [address]);
    await anvil.rpc('anvil_setBalance', [address, '0xde0b6b3a7640000']);
    await usdt.transfer(payer, address, usdt18(4n));
    await mine(4);
    await eventually(async () => ((await depositsTo(address)).some((d) => d.state === 'confirmed') ? true : undefined), 'the watcher to confirm', 30_000);
    const reconcile = () => reconcilerWith(hider.url).reconcilePage({ rail: 'USDT_BSC', environment: 'test', after: null });
    await reconcile();
    expect(await findingsOf(address)).toEqual([]);

    const mismatchEvents = (await eventsOfType('reconciliation.mismatch')).length;
    const sweep = await usdt.transfer(address, payer, usdt18(4n)); // swept with the merchant's own key
    await mine(4);
    await watcherPast(await lastBlock(sweep));
    expect((await reconcile()).outflows).toBe(1);
    expect(await findingsOf(address)).toEqual([expect.objectContaining({ kind: 'outflow', status: 'noted', balance_minor: '0', difference_minor: String(usdt18(4n)) })]);
    expect(await eventsOfType('reconciliation.mismatch')).toHaveLength(mismatchEvents);
    expect((await reconcile()).outflows).toBe(0); // noted once

    // After the sweep, a deposit the provider hides is still a mismatch: the outflow moved what is expected down.
    hideTransfersTo(hider, address);
    const hidden = await usdt.transfer(payer, address, usdt18(2n));
    await mine(4);
    await watcherPast(await lastBlock(hidden));
    expect((await reconcile()).mismatches).toBe(1);
    expect(await findingsOf(address)).toEqual([
      expect.objectContaining({ kind: 'outflow' }),
      expect.objectContaining({ kind: 'mismatch', status: 'open', balance_minor: String(usdt18(2n)), difference_minor: String(usdt18(2n)) }),
    ]);
    expect(await eventsOfType('reconciliation.mismatch')).toHaveLength(mismatchEvents + 1);
  }, 90_000);

  it('lists the findings through the API and the dashboard, to their own store and environment only', async () => {
    const res = await stack.request({ method: 'GET', url: '/v1/reconciliation/findings', key });
    expect(res.status).toBe(200);
    const kinds = res.body.data.map((f: { kind: string; status: string }) => `${f.kind}:${f.status}`);
    expect(kinds).toEqual(['mismatch:open', 'outflow:noted', 'mismatch:resolved']); // newest first
    expect(res.body.data[2]).toMatchObject({ id: expect.stringMatching(/^rcf_[0-9a-z]{24}$/), network: 'BSC', balance: '10', difference: '10', resolvedAt: expect.any(String) });
    const open = await stack.request({ method: 'GET', url: '/v1/reconciliation/findings?status=open&limit=5', key });
    expect(open.body.data.map((f: { status: string }) => f.status)).toEqual(['open']);
    expect((await stack.request({ method: 'GET', url: '/v1/reconciliation/findings?limit=0', key })).body.error).toMatchObject({ type: 'invalid_request_error', param: 'limit' });
    expect((await stack.request({ method: 'GET', url: '/v1/reconciliation/findings', key: store.keys.live.secretKey })).body.data).toEqual([]);
    const other = await stack.createStore('Someone else');
    expect((await stack.request({ method: 'GET', url: '/v1/reconciliation/findings', key: other.keys.test.secretKey })).body.data).toEqual([]);
    await expectSecretKeyRequired(stack, { method: 'GET', url: '/v1/reconciliation/findings' });

    const { cookie } = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'viewer'));
    const page = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/reconciliation', headers: { cookie } });
    expect(page.status).toBe(200);
    for (const f of res.body.data) expect(page.text).toContain(`data-finding="${f.id}"`);
    expect(page.text).toContain('reconciliation.mismatch');
  }, 60_000);
});
