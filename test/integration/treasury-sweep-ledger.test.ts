import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'slonik';
import { keccak256, parseEther, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { z } from 'zod';
import { formatUnits } from '../../domain/money.js';
import { createReconciliationActivities } from '../../activities/reconciliation/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { claimSweepBroadcast } from '../../db/sweep-plan-repo.js';
import { adapterOf } from '../../rails/adapters.js';
import { addSweepDestination } from '../../services/treasury/destinations.js';
import { sweepLedgerHooks } from '../../services/treasury/sweep-ledger.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { railsThrough, startCuttingProxy } from '../helpers/cutting-proxy.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { httpCall } from '../helpers/http.js';
import { connectAllRails, evmXpub, tronXpub } from '../helpers/fixtures.js';
import { deployMulticall3 } from '../helpers/multicall.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { encryptionEnv, loopbackWebhooks } from '../helpers/webhook-harness.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The ledger knows sweeps (issue 30 item 4; docs/treasury.md) on anvil, with the real watcher:
 * links are paid, the plan is signed offline and broadcast; each transaction is recorded before it
 * is sent and as it is mined, the watcher's tick takes the sweep to `final` at the rail's depth (3 here), one
 * `sweep.completed` webhook goes out; the watcher counts neither the top-ups nor the outgoing
 * transfers as payments; the reconciler finds the swept addresses explained (no finding). A
 * broadcast cut short is `failed`, with one `sweep.failed` event. Every transaction sent is
 * followed to its end whatever the sweep's state: a broadcast stopped after some transfers went
 * out ends `partially_completed` once they are final (the reconciler subtracts them: no outflow),
 * and a transfer a reorganisation takes out goes back to `broadcast`, then `dropped` once its
 * sender's nonce is taken by another transaction at the rail's depth. A process killed right after
 * the node took a transfer leaves it in the ledger, followed to final; a node's refusal leaves it
 * `dropped`; a transaction the node holds already counts as sent.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const fundingAccount = mnemonicToAccount(mnemonic, { path: "m/44'/60'/0'/0/0" });

let anvil: Anvil;
let usdt: TestToken;
let payer: Address;
let destination: Address;
let stack: Stack;
let store: CreatedStore;
let key: string;
let receiver: WebhookReceiver;
const dir = mkdtempSync(join(tmpdir(), 'sweep-ledger-'));
const mnemonicFile = join(dir, 'mnemonic.txt');
writeFileSync(mnemonicFile, mnemonic);

const usdt18 = (n: bigint) => n * 10n ** 18n;
const mine = (blocks: number) => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
const railEnv = () => ({ USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CONFIRMATIONS_USDT_BSC: '3', CHAIN_ID_USDT_BSC_TEST: String(anvil.chainId) });

const depositsTo = (address: string) =>
  stack.pool.any(sql.type(z.object({ tx_hash: z.string(), state: z.string(), amount_minor: z.string() }))`
    SELECT tx_hash, state, amount_minor::text FROM chain_deposits WHERE lower(to_address) = ${address.toLowerCase()}`);
const depositsWithHash = (hashes: readonly string[]) =>
  stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM chain_deposits WHERE lower(tx_hash) = ANY(${sql.array(hashes.map((h) => h.toLowerCase()), 'text')})`);
const depositCount = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM chain_deposits`);
const findingsOf = (address: string) =>
  stack.pool.any(sql.type(z.object({ kind: z.string() }))`SELECT kind FROM reconciliation_findings WHERE lower(address) = ${address.toLowerCase()}`);
const eventsOf = (type: string, planId: string) =>
  stack.pool.anyFirst(sql.type(z.object({ payload: z.any() }))`SELECT payload FROM events WHERE type = ${type} AND payload->'data'->>'id' = ${planId}`);
const planState = (id: string) => stack.pool.oneFirst(sql.type(z.object({ state: z.string().nullable() }))`SELECT state FROM sweep_plans WHERE id = ${id}`);
const cursorBlock = () =>
  stack.pool.maybeOneFirst(sql.type(z.object({ n: z.string() }))`SELECT block_number::text AS n FROM chain_cursors WHERE rail = 'USDT_BSC' AND environment = 'test'`);

async function watcherPast(block: bigint): Promise<void> {
  await eventually(async () => {
    const c = await cursorBlock();
    return c !== null && BigInt(c) >= block ? true : undefined;
  }, `the watcher to pass block ${block}`, 30_000);
}

function reconcile() {
  return createReconciliationActivities({ pool: stack.pool, config: stack.config, temporal: stack.temporal }).reconcilePage({ rail: 'USDT_BSC', environment: 'test', after: null });
}

/** A link paid with a real transfer, confirmed by the watcher. */
async function paidLink(amount: bigint): Promise<Address> {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'] } });
  expect(res.status).toBe(201);
  const address = (res.body.bscAddress as string).toLowerCase() as Address;
  await usdt.transfer(payer, address, amount);
  await mine(4);
  await eventually(async () => ((await depositsTo(address)).some((d) => d.state === 'confirmed') ? true : undefined), 'the watcher to confirm', 30_000);
  return address;
}

/** The signer, run as the merchant would, with every socket forbidden. */
function signOffline(answer: unknown): { transactions: { raw: Hex; kind: string }[] } {
  const planFile = join(dir, `plan-${Date.now()}.json`);
  const out = `${planFile}.signed`;
  writeFileSync(planFile, JSON.stringify(answer));
  const r = spawnSync(process.execPath, ['--import', './test/helpers/no-network.mjs', 'bin/sweep-sign.mjs', planFile, '--mnemonic-file', mnemonicFile, '--out', out], { encoding: 'utf8' });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(readFileSync(out, 'utf8'));
}

const planSweep = () => stack.request({ method: 'POST', url: '/v1/sweeps', key, payload: { rail: 'USDT_BSC', destination, fundingAddress: fundingAccount.address } });
const broadcast = (id: string, payload: unknown) => stack.request({ method: 'POST', url: `/v1/sweeps/${id}/broadcast`, key, payload });

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  payer = anvil.accounts[1]!;
  destination = anvil.accounts[5]!;
  await usdt.mint(payer, 10n ** 30n);
  await deployMulticall3(anvil);
  stack = await startStack({
    ...loopbackWebhooks, ...encryptionEnv(), ...railEnv(),
    CHAIN_WATCHERS: 'on', CHAIN_POLL_MS: '100', RPC_URL_USDT_BSC_TEST: anvil.url, WEBHOOK_RETRY_SCALE: '0.001', TREASURY_DESTINATION_DELAY_SECONDS: '0',
  });
  store = await stack.createStore('Ledgered sweeps');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
  const owner = await dashboardUser(stack, store, 'owner');
  await addSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, owner.userId, { rail: 'USDT_BSC', address: destination, label: 'cold' });
  await anvil.rpc('anvil_setBalance', [fundingAccount.address, `0x${parseEther('10').toString(16)}`]);
  receiver = await WebhookReceiver.start();
  const ep = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/hooks') } });
  expect(ep.status).toBe(201);
  expect(ep.body.enabledEvents).toEqual(expect.arrayContaining(['sweep.completed', 'sweep.failed']));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
  await anvil?.stop();
});

describe('the sweep ledger', () => {
  it('GET /v1/sweeps and /v1/sweeps/:id answer a secret key only; an unknown sweep is a 404', async () => {
    await expectSecretKeyRequired(stack, { method: 'GET', url: '/v1/sweeps' });
    await expectSecretKeyRequired(stack, { method: 'GET', url: '/v1/sweeps/swp_nope' });
    const res = await stack.request({ method: 'GET', url: '/v1/sweeps/swp_nope', key });
    expect(res.status).toBe(404);
  });

  it('records a broadcast sweep, follows it to final at the rail depth, sends sweep.completed once; the watcher and the reconciler count no sweep as a payment or missing money', async () => {
    const a = await paidLink(usdt18(6n));
    const b = await paidLink(7_000_000_000_000_000_001n);
    // Before the sweep the reconciler finds both addresses explained.
    await watcherPast(await anvil.publicClient.getBlockNumber() - 3n);
    const before = await reconcile();
    expect(before.mismatches).toBe(0);
    expect(await findingsOf(a)).toEqual([]);
    const depositsBefore = await depositCount();

    const planned = await planSweep();
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    // No BNB price configured for test keys here: the USD cost is null, with the reason.
    expect(planned.body.cost).toMatchObject({ usd: null, usdPrice: null, usdOmitted: expect.stringMatching(/^Test keys price no BNB .*TEST_NATIVE_USD_PRICES/) });
    expect((await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key })).body.state).toBeNull();
    const signed = signOffline(planned.body);
    const sent = await broadcast(id, signed);
    expect(sent.status).toBe(200);
    const hashes = sent.body.transactions.map((t: { hash: string }) => t.hash);

    // Mined, not final: the rail wants 3 confirmations and no block was mined on top.
    const mined = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(mined.status).toBe(200);
    expect(mined.body).toMatchObject({ id, rail: 'USDT_BSC', destination: destination.toLowerCase(), state: 'mined', totalToken: '13.000000000000000001', tokenSymbol: 'USDT', finishedAt: null });
    const txs = mined.body.transactions as { kind: string; source: string; from: string; to: string; amount: string; hash: string; state: string; blockNumber: string }[];
    // Each transaction is final once 3 blocks stand on it (anvil mines one block per transaction): the early ones already are.
    const head = await anvil.publicClient.getBlockNumber();
    expect(txs.map((t) => t.kind)).toEqual(['top_up', 'top_up', 'transfer', 'transfer']);
    expect(txs.map((t) => t.state)).toEqual(txs.map((t) => (BigInt(t.blockNumber) <= head - 2n ? 'final' : 'mined')));
    expect(txs.at(-1)!.state).toBe('mined');
    expect(txs.map((t) => t.hash)).toEqual(hashes);
    const transfers = txs.filter((t) => t.kind === 'transfer');
    expect(transfers.map((t) => [t.source, t.from, t.to, t.amount]).sort()).toEqual(
      [[a, a, destination.toLowerCase(), '6'], [b, b, destination.toLowerCase(), '7.000000000000000001']].sort(),
    );
    for (const t of txs.filter((x) => x.kind === 'top_up')) {
      expect(t.from).toBe(fundingAccount.address.toLowerCase());
      expect(t.to).toBe(t.source);
      expect(BigInt(t.amount.replace('.', '')) > 0n).toBe(true);
    }
    expect(await eventsOf('sweep.completed', id)).toEqual([]);

    // The watcher's tick follows it: three more blocks, and it is final without anyone asking.
    await mine(3);
    await eventually(async () => ((await planState(id)) === 'final' ? true : undefined), 'the watcher to take the sweep to final', 30_000);
    const final = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(final.body.state).toBe('final');
    expect(final.body.finishedAt).not.toBeNull();
    expect(final.body.transactions.every((t: { state: string }) => t.state === 'final')).toBe(true);
    const listed = await stack.request({ method: 'GET', url: '/v1/sweeps', key });
    expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(id);

    // One sweep.completed event, delivered to the endpoint that takes every type.
    const completed = await eventsOf('sweep.completed', id);
    expect(completed).toHaveLength(1);
    expect(completed[0].data).toMatchObject({ id, state: 'final' });
    await receiver.waitFor(() => receiver.requestsTo('/hooks').some((r) => JSON.parse(r.body).type === 'sweep.completed'), 'sweep.completed delivered');
    expect(receiver.requestsTo('/hooks').filter((r) => JSON.parse(r.body).type === 'sweep.completed')).toHaveLength(1);
    await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key }); // following again changes nothing
    expect(await eventsOf('sweep.completed', id)).toHaveLength(1);

    // The watcher read the sweep's blocks and counted none of its transactions (gas top-ups in, tokens out) as a deposit.
    const lastSweepBlock = BigInt(txs.at(-1)!.blockNumber);
    await mine(2);
    await watcherPast(lastSweepBlock);
    expect(await depositsWithHash(hashes)).toBe(0);
    expect(await depositCount()).toBe(depositsBefore);
    expect((await depositsTo(a)).map((d) => d.amount_minor)).toEqual([String(usdt18(6n))]);

    // The reconciler: balances of zero, explained by the deposits less the sweeps; no finding, no outflow.
    const after = await reconcile();
    expect({ mismatches: after.mismatches, outflows: after.outflows }).toEqual({ mismatches: 0, outflows: 0 });
    expect(await findingsOf(a)).toEqual([]);
    expect(await findingsOf(b)).toEqual([]);
    expect(await usdt.balanceOf(a)).toBe(0n);
  }, 120_000);

  it('a broadcast cut short (a source spent its nonce elsewhere) is failed, with one sweep.failed event', async () => {
    const c = await paidLink(usdt18(3n));
    const planned = await planSweep();
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const signed = signOffline(planned.body);
    // The source's key moves a little of it first (nonce 0 taken): the planned transfer cannot be sent.
    await anvil.rpc('anvil_impersonateAccount', [c]);
    await anvil.rpc('anvil_setBalance', [c, `0x${parseEther('1').toString(16)}`]);
    await usdt.transfer(c, payer, 1n);
    const res = await broadcast(id, signed);
    expect(res.status).toBe(502);
    expect(await planState(id)).toBe('failed');
    const got = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(got.body.state).toBe('failed');
    // The transfer was recorded before it was sent; the node refused it (nonce too low, and it holds no such transaction): dropped.
    expect(got.body.transactions.map((t: { kind: string; state: string }) => `${t.kind}:${t.state}`)).toEqual(['top_up:mined', 'transfer:dropped']);
    expect(await eventsOf('sweep.failed', id)).toHaveLength(1);
    expect(await eventsOf('sweep.completed', id)).toEqual([]);
    // In the outbox, which the outbox sweeper delivers (within about a minute): the request path waits on no endpoint.
  }, 120_000);

  it('the dashboard Treasury page lists the recent sweeps with their state', async () => {
    const { cookie } = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'viewer'));
    const page = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/treasury?rail=USDT_BSC', headers: { cookie } });
    expect(page.status).toBe(200);
    const listed = (await stack.request({ method: 'GET', url: '/v1/sweeps', key })).body.data as { id: string; state: string; totalToken: string }[];
    expect(listed.map((x) => x.state)).toEqual(['failed', 'final']);
    const rows = [...page.text.matchAll(/<tr data-sweep="(swp_[^"]+)">[\s\S]*?data-testid="sweep-total">([^<]*)<[\s\S]*?data-testid="sweep-state">([^<]*)</g)].map((m) => [m[1], m[2], m[3]]);
    expect(rows).toEqual(listed.map((x) => [x.id, `${x.totalToken} USDT`, x.state]));
  });

  /** The source of the plan's last transfer spends its next nonce elsewhere (its own key moves 1 unit): the transfer cannot go. */
  async function spendNonceOf(source: Address): Promise<void> {
    await anvil.rpc('anvil_impersonateAccount', [source]);
    await anvil.rpc('anvil_setBalance', [source, `0x${parseEther('1').toString(16)}`]);
    await usdt.transfer(source, payer, 1n);
  }
  const lastTransferSource = (plan: { transactions: { kind: string; from: string }[] }) => plan.transactions.filter((t) => t.kind === 'transfer').at(-1)!.from as Address;
  const txStates = async (id: string) =>
    ((await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key })).body.transactions as { kind: string; source: string; state: string }[]);

  it('a broadcast stopped after some transfers went out: each is followed to final, the sweep ends partially_completed with one sweep.failed, and the reconciler subtracts them (no outflow)', async () => {
    const e = await paidLink(usdt18(4n));
    const f = await paidLink(usdt18(5n));
    const planned = await planSweep();
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const plan = planned.body.plan as { transactions: { kind: string; from: string; to: string }[]; sources: { address: string; amountMinor: string }[] };
    const broken = lastTransferSource(plan);
    const through = plan.sources.filter((s) => s.address !== broken);
    expect(through.map((s) => s.address)).toEqual(expect.arrayContaining([e, f].filter((x) => x !== broken)));
    const signed = signOffline(planned.body);
    await spendNonceOf(broken);

    // The transfers before the last were sent (anvil mines each as it comes); the last was refused, so the request fails.
    const res = await broadcast(id, signed);
    expect(res.status).toBe(502);
    // Followed although the broadcast failed: the transfers sent are mined, and the sweep waits on them, not ended; the refused one is dropped.
    const sentTransfers = (await txStates(id)).filter((t) => t.kind === 'transfer');
    expect(sentTransfers.map((t) => [t.source, t.state === 'mined' || t.state === 'final' ? 'in' : t.state]))
      .toEqual([...through.map((s) => [s.address, 'in']), [broken, 'dropped']]);
    expect(await eventsOf('sweep.failed', id)).toEqual([]);

    await mine(3);
    await eventually(async () => ((await planState(id)) === 'partially_completed' ? true : undefined), 'the watcher to end the sweep partially completed', 30_000);
    const got = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    const refusedTransfer = (t: { kind: string; source: string }) => t.kind === 'transfer' && t.source === broken;
    expect(got.body.transactions.map((t: { kind: string; source: string; state: string }) => (refusedTransfer(t) ? 'dropped' : t.state)).every((x: string) => x === 'final' || x === 'dropped')).toBe(true);
    expect(got.body.transactions.filter(refusedTransfer).map((t: { state: string }) => t.state)).toEqual(['dropped']);
    const moved = through.reduce((sum, s) => sum + BigInt(s.amountMinor), 0n);
    expect(got.body.movedToken).toBe(formatUnits(moved, 18));
    const failed = await eventsOf('sweep.failed', id);
    expect(failed).toHaveLength(1);
    expect(failed[0].data).toMatchObject({ id, state: 'partially_completed', movedToken: got.body.movedToken });
    expect(failed[0].data.transactions.filter((t: { kind: string }) => t.kind === 'transfer').map((t: { source: string; state: string }) => [t.source, t.state]))
      .toEqual([...through.map((s) => [s.address, 'final']), [broken, 'dropped']]);
    expect(await eventsOf('sweep.completed', id)).toEqual([]);

    // The reconciler subtracts the transfers that went through: those addresses are explained, no outflow noted for them.
    await watcherPast(await anvil.publicClient.getBlockNumber() - 3n);
    await reconcile();
    for (const s of through) {
      expect(await usdt.balanceOf(s.address as Address)).toBe(0n);
      expect(await findingsOf(s.address)).toEqual([]);
    }
  }, 120_000);

  it('a mined transfer a reorganisation takes out goes back to broadcast, then dropped once its nonce is taken at depth: the sweep ends partially_completed', async () => {
    await paidLink(usdt18(2n));
    const planned = await planSweep();
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const last = lastTransferSource(planned.body.plan);
    const sent = await broadcast(id, signOffline(planned.body));
    expect(sent.status).toBe(200);
    expect(await planState(id)).toBe('mined');
    const lastBlock = BigInt(sent.body.transactions.at(-1).blockNumber);
    expect(lastBlock).toBe(await anvil.publicClient.getBlockNumber());

    // The head block, holding the last transfer, is replaced by an empty one before it reached depth 3.
    await anvil.rpc('anvil_reorg', [1, []]);
    await eventually(async () => ((await planState(id)) === 'broadcast' ? true : undefined), 'the follower to see the transfer gone', 30_000);
    const lastTx = (await txStates(id)).at(-1)!;
    expect({ source: lastTx.source, state: lastTx.state }).toEqual({ source: last, state: 'broadcast' });
    const gone = (await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key })).body.transactions.at(-1);
    expect(gone.blockNumber).toBeNull();

    // Its sender's key spends that nonce on something else; three blocks on, the sweep's transfer never will be mined.
    await spendNonceOf(last);
    await mine(3);
    await eventually(async () => ((await planState(id)) === 'partially_completed' ? true : undefined), 'the follower to end the sweep', 30_000);
    const states = (await txStates(id)).map((t) => t.state);
    expect(states.at(-1)).toBe('dropped');
    expect(states.slice(0, -1).every((s) => s === 'final')).toBe(true);
    expect(await eventsOf('sweep.failed', id)).toHaveLength(1);
  }, 120_000);

  it('a node refusal (the funding account emptied after signing): the top-up is recorded dropped, not live, and the sweep ends failed with one sweep.failed', async () => {
    const h = await paidLink(usdt18(1n));
    const planned = await planSweep();
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const signed = signOffline(planned.body);
    const topUps = (planned.body.plan.transactions as { kind: string }[]).filter((t) => t.kind === 'top_up');
    expect(topUps.length).toBeGreaterThan(0);
    // The funding account is emptied meanwhile: the node refuses the first top-up (insufficient funds).
    await anvil.rpc('anvil_setBalance', [fundingAccount.address, '0x0']);
    const res = await broadcast(id, signed);
    await anvil.rpc('anvil_setBalance', [fundingAccount.address, `0x${parseEther('10').toString(16)}`]);
    expect(res.status).toBe(502);
    expect(await planState(id)).toBe('failed');
    const txs = await txStates(id);
    // Nothing claims a live transaction: the refused top-up is dropped (or absent), nothing else was sent.
    expect(txs.filter((t) => t.state === 'broadcast' || t.state === 'mined')).toEqual([]);
    expect(txs.map((t) => `${t.kind}:${t.state}`)).toEqual(['top_up:dropped']);
    expect(await eventsOf('sweep.failed', id)).toHaveLength(1);
    await mine(4);
    await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key }); // following again changes nothing
    expect(await eventsOf('sweep.failed', id)).toHaveLength(1);
    expect(await eventsOf('sweep.completed', id)).toEqual([]);
    expect(await usdt.balanceOf(h)).toBe(usdt18(1n));
  }, 120_000);

  it('a broadcast whose process died right after the node took a transfer: the ledger has it, the follower takes it to final, one sweep.completed, no outflow', async () => {
    const g = await paidLink(usdt18(8n));
    const planned = await planSweep();
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const plan = planned.body.plan as { transactions: { kind: string; from: string }[]; sources: { amountMinor: string }[] };
    const signed = signOffline(planned.body);
    const raws = signed.transactions.map((t) => t.raw);
    const cutIndex = plan.transactions.findIndex((t) => t.kind === 'transfer' && t.from === g);
    const cutRaw = raws[cutIndex]!.toLowerCase();
    // The node takes g's transfer (anvil mines it), and the broadcasting process never hears back: it is gone.
    const proxy = await startCuttingProxy(anvil.url, (_path, body) => body.includes('eth_sendRawTransaction') && body.toLowerCase().includes(cutRaw));
    const scope = { storeId: store.clientId, environment: 'test' as const };
    try {
      const rails = railsThrough(stack.config.rails, 'USDT_BSC', proxy.url);
      const claim = () => claimSweepBroadcast(stack.pool, scope.storeId, scope.environment, id);
      const hooks = sweepLedgerHooks(stack.pool, scope, id, 'USDT_BSC', planned.body.plan, destination.toLowerCase());
      await expect(adapterOf('USDT_BSC').broadcastSweep!(rails, 'USDT_BSC', 'test', planned.body.plan, raws, claim, hooks)).rejects.toThrow();
    } finally {
      await proxy.close();
    }
    expect(proxy.cut()).toHaveLength(1);
    const cutHash = keccak256(raws[cutIndex] as Hex);
    expect((await anvil.publicClient.getTransactionReceipt({ hash: cutHash })).status).toBe('success');
    expect(await usdt.balanceOf(g)).toBe(0n);

    // The ledger knows the transfer the dead process sent, under its hash.
    const rows = await stack.pool.any(sql.type(z.object({ seq: z.number(), tx_hash: z.string(), state: z.string() }))`
      SELECT seq, tx_hash, state FROM sweep_transactions WHERE plan_id = ${id} ORDER BY seq`);
    expect(rows.map((r) => r.seq)).toEqual(plan.transactions.map((_t, i) => i));
    expect(rows.find((r) => r.seq === cutIndex)).toMatchObject({ tx_hash: cutHash, state: 'broadcast' });

    // The broadcast never said it ended; twenty minutes on, the follower (the watcher's tick) owns it and takes it to final.
    await stack.pool.query(sql.unsafe`UPDATE sweep_plans SET broadcast_at = broadcast_at - interval '21 minutes' WHERE id = ${id}`);
    await mine(3);
    await eventually(async () => ((await planState(id)) === 'final' ? true : undefined), 'the follower to take the sweep to final', 30_000);
    const final = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(final.body.transactions.every((t: { state: string }) => t.state === 'final')).toBe(true);
    expect(final.body.movedToken).toBe(formatUnits(plan.sources.reduce((sum, s) => sum + BigInt(s.amountMinor), 0n), 18));
    expect(await eventsOf('sweep.completed', id)).toHaveLength(1);
    expect(await eventsOf('sweep.failed', id)).toEqual([]);

    // The reconciler subtracts the transfer: g is explained, no outflow.
    await watcherPast(await anvil.publicClient.getBlockNumber() - 3n);
    await reconcile();
    expect(await findingsOf(g)).toEqual([]);
  }, 120_000);

  it('a transaction the node holds already (the signer sent the first top-up itself) counts as sent: the broadcast goes on, the sweep ends final once', async () => {
    await paidLink(usdt18(2n));
    const planned = await planSweep();
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const signed = signOffline(planned.body);
    expect(signed.transactions[0]!.kind).toBe('top_up');
    // Anvil mines it at once: the broadcast's own send of it is then answered "nonce too low".
    const own = (await anvil.rpc('eth_sendRawTransaction', [signed.transactions[0]!.raw])) as Hex;
    expect(own).toBe(keccak256(signed.transactions[0]!.raw));
    const sent = await broadcast(id, signed);
    expect(sent.status).toBe(200);
    expect(sent.body.transactions.map((t: { hash: string; status: string }) => [t.hash, t.status])).toEqual(signed.transactions.map((t) => [keccak256(t.raw), 'success']));
    await mine(3);
    await eventually(async () => ((await planState(id)) === 'final' ? true : undefined), 'the follower to take the sweep to final', 30_000);
    expect((await txStates(id)).map((t) => t.state).every((x) => x === 'final')).toBe(true);
    expect(await eventsOf('sweep.completed', id)).toHaveLength(1);
  }, 120_000);
});
