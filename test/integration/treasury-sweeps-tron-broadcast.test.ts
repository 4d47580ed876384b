import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { sql } from 'slonik';
import { utils } from 'tronweb';
import { z } from 'zod';
import { createReconciliationActivities } from '../../activities/reconciliation/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import type { TronGridEmulator } from '../../emulators/trongrid/server.js';
import { formatUnits } from '../../domain/money.js';
import { solidifyLag } from '../../emulators/trongrid/jsonrpc.js';
import { tronAddress, tronAddressFromBytes, tronAddressToEvmHex } from '../../rails/tron/address.js';
import { claimSweepBroadcast } from '../../db/sweep-plan-repo.js';
import { adapterOf } from '../../rails/adapters.js';
import { followSweeps, sweepLedgerHooks } from '../../services/treasury/sweep-ledger.js';
import { railsThrough, startCuttingProxy } from '../helpers/cutting-proxy.js';
import { sweepingStore, tronSweepChain } from '../helpers/sweep-store.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * A TRON sweep end to end on the TronGrid emulator (docs/treasury.md, "Broadcasting a TRON plan"):
 * links paid in USDT (recorded by the reconciler's rescan), a plan, signed offline by `sweep:sign`
 * with the test mnemonic and no network, broadcast phase by phase (accounts created and TRX sent,
 * energy lent, the transfers, the energy taken back), followed to the solidified block. The
 * destination holds exactly the total, every source none, the lent energy is back, the TRX burned
 * is within the plan's figure, the ledger and the reconciler agree. A transaction re-signed to
 * another recipient, one signed by another key, and a replayed broadcast are refused and send
 * nothing.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const randomTron = () => tronAddressFromBytes(randomBytes(20));
const hex41 = (a: string) => `41${tronAddressToEvmHex(a).slice(2)}`;
const keyAt = (path: string) => mnemonicToAccount(mnemonic, { path: path as never });
const addressAt = (path: string) => tronAddress(Buffer.from(keyAt(path).publicKey.slice(4), 'hex'));
const usdt = randomTron();
const payer = randomTron();
const destination = randomTron();
let tron: TronGridEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
let miner: NodeJS.Timeout | undefined;

interface PlanTx { kind: string; from: string; source: string; value: string; txID: string; raw_data: any; raw_data_hex: string }
interface SignedFile { planId: string; transactions: Array<{ kind: string; from: string; txID: string; raw: string }> }

const tokenOf = (holder: string) => {
  // The emulator's balance, as the chain's Multicall3 read gives it.
  const body = { owner_address: holder, contract_address: usdt, function_selector: 'balanceOf(address)', parameter: tronAddressToEvmHex(holder).slice(2).padStart(64, '0'), visible: true };
  return fetch(`${tron.url}/wallet/triggerconstantcontract`, { method: 'POST', body: JSON.stringify(body) })
    .then((r) => r.json() as Promise<{ constant_result: string[] }>)
    .then((j) => BigInt(`0x${j.constant_result[0]}`));
};
const plan = (fundingAddress: string) => stack.request({ method: 'POST', url: '/v1/sweeps', key, payload: { rail: 'USDT_TRON', destination, fundingAddress } });
const broadcast = (id: string, signed: SignedFile) => stack.request({ method: 'POST', url: `/v1/sweeps/${id}/broadcast`, key, payload: signed });
const ledgerRows = (id: string) => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM sweep_transactions WHERE plan_id = ${id}`);
const events = (type: string, id: string) =>
  stack.pool.anyFirst(sql.type(z.object({ payload: z.any() }))`SELECT payload FROM events WHERE type = ${type} AND payload->'data'->>'id' = ${id}`);
const reconcile = () =>
  createReconciliationActivities({ pool: stack.pool, config: stack.config, temporal: stack.temporal }).reconcilePage({ rail: 'USDT_TRON', environment: 'test', after: null });

/** Signs a plan as the merchant would: `sweep:sign` on a machine with no network. */
function signOffline(body: unknown, extra: string[] = []): SignedFile {
  const dir = mkdtempSync(join(tmpdir(), 'tron-broadcast-'));
  writeFileSync(join(dir, 'mnemonic.txt'), mnemonic);
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(body));
  const r = spawnSync(process.execPath, ['--import', './test/helpers/no-network.mjs', 'bin/sweep-sign.mjs', join(dir, 'plan.json'), '--mnemonic-file', join(dir, 'mnemonic.txt'), ...extra], { encoding: 'utf8' });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(readFileSync(join(dir, 'plan.signed.json'), 'utf8')) as SignedFile;
}

/** A transaction re-signed by `path`'s key after its JSON was changed by `change`: what a thief holding one key could send. */
async function reSigned(tx: PlanTx, path: string, change: (rawData: any) => void): Promise<string> {
  const raw_data = structuredClone(tx.raw_data);
  change(raw_data);
  const pb = utils.transaction.txJsonToPb({ visible: true, txID: '', raw_data, raw_data_hex: '' } as never);
  const txID = String(utils.transaction.txPbToTxID(pb)).replace(/^0x/, '');
  const raw_data_hex = String(utils.transaction.txPbToRawDataHex(pb)).replace(/^0x/, '').toLowerCase();
  const signature = (await keyAt(path).sign!({ hash: `0x${txID}` as Hex })).slice(2);
  return JSON.stringify({ visible: true, txID, raw_data, raw_data_hex, signature: [signature] });
}

beforeAll(async () => {
  tron = await tronSweepChain(usdt);
  stack = await startStack({ RPC_URL_USDT_TRON_TEST: tron.url, USDT_CONTRACT_USDT_TRON_TEST: usdt, TREASURY_DESTINATION_DELAY_SECONDS: '0' });
  ({ store, key } = await sweepingStore(stack, 'TRON sweep broadcast', ['USDT_TRON'], destination));
}, 120_000);

afterEach(() => clearInterval(miner));
afterAll(async () => {
  await stack?.stop();
  await tron?.close();
});

/** Links paid on chain (the reconciler's rescan records each deposit). */
async function payLinks(amounts: bigint[]): Promise<string[]> {
  const paid: string[] = [];
  for (const amount of amounts) {
    const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_TRON'] } });
    expect(link.status).toBe(201);
    tron.chain.mine(1, [{ contract: usdt, from: payer, to: link.body.tronAddress, amount }]);
    tron.setBalance(usdt, link.body.tronAddress, amount);
    paid.push(link.body.tronAddress);
  }
  tron.chain.mine(2);
  await reconcile();
  return paid;
}

/** Blocks every 200 ms while a broadcast waits for its transactions (TRON makes one every 3 s). */
const mineMeanwhile = () => {
  miner = setInterval(() => tron.chain.mine(1), 200);
};

describe('POST /v1/sweeps/:id/broadcast (TRON)', () => {
  it('energy delegation: verified, sent phase by phase, followed to the solidified block; the destination holds the total, the energy comes back', async () => {
    const paid = await payLinks([10_000_000n, 2_500_001n, 700_000n]);
    // One source once received TRX and used its free bandwidth today: it gets the TRX its transfer's bytes burn.
    tron.setTrx(paid[0]!, 50_000n);
    tron.accounts.useFreeBandwidth(hex41(paid[0]!), 600);
    const funding = addressAt("m/44'/195'/0'/0/0");
    tron.setTrx(funding, 100_000_000n);
    tron.stakeForEnergy(funding, 100_000_000_000n);
    const staked = tron.accounts.canDelegateSun(hex41(funding));
    const fundingBefore = tron.trxOf(funding);

    const planned = await plan(funding);
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const p = planned.body.plan;
    expect(p.kind).toBe('energy_delegation');
    const txs: PlanTx[] = p.transactions;
    expect(txs.map((t) => t.kind).sort()).toEqual(['activate', 'activate', 'delegate', 'delegate', 'delegate', 'top_up', 'transfer', 'transfer', 'transfer', 'undelegate', 'undelegate', 'undelegate']);
    const signed = signOffline(planned.body);

    // Refused before anything is sent: a transfer re-signed (by its own key) to another recipient …
    const t = txs.findIndex((x) => x.kind === 'transfer');
    const source = p.sources.find((s: { address: string }) => s.address === txs[t]!.source);
    const thief = randomTron();
    const altered = structuredClone(signed);
    altered.transactions[t]!.raw = await reSigned(txs[t]!, source.path, (raw) => {
      raw.contract[0].parameter.value.data = `a9059cbb${tronAddressToEvmHex(thief).slice(2).padStart(64, '0')}${BigInt(source.amountMinor).toString(16).padStart(64, '0')}`;
    });
    const refused = await broadcast(id, altered);
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 409, code: 'invalid_state' });
    expect(refused.body.error.message).toMatch(new RegExp(`Transaction ${t} \\(transfer\\) differs from the plan in its bytes`));
    // … and the plan's own transaction signed by another key.
    const d = txs.findIndex((x) => x.kind === 'delegate');
    const wrongKey = structuredClone(signed);
    wrongKey.transactions[d]!.raw = await reSigned(txs[d]!, "m/44'/195'/0'/0/7", () => undefined);
    const wrong = await broadcast(id, wrongKey);
    expect(wrong.status).toBe(409);
    expect(wrong.body.error.message).toMatch(new RegExp(`^Transaction ${d} \\(delegate\\) is not signed by its owner ${funding}\\.$`));
    // Its signature swapped for another key's over the same bytes.
    const swapped = structuredClone(signed);
    const own = JSON.parse(swapped.transactions[d]!.raw);
    own.signature = [(await keyAt("m/44'/195'/0'/0/7").sign!({ hash: `0x${own.txID}` as Hex })).slice(2)];
    swapped.transactions[d]!.raw = JSON.stringify(own);
    const swappedAnswer = await broadcast(id, swapped);
    expect(swappedAnswer.status).toBe(409);
    expect(swappedAnswer.body.error.message).toMatch(new RegExp(`Transaction ${d} \\(delegate\\) is not signed by its owner ${funding}`));
    expect({ pending: tron.chain.pending, rows: await ledgerRows(id), trx: tron.trxOf(funding) }).toEqual({ pending: 0, rows: 0, trx: fundingBefore });

    mineMeanwhile();
    const sent = await broadcast(id, signed);
    clearInterval(miner);
    expect(sent.status).toBe(200);
    // Phase by phase: TRX first, then energy lent, then the transfers, then the energy taken back.
    const phase = (kinds: string[]) => txs.filter((x) => kinds.includes(x.kind)).map((x) => x.txID);
    expect(sent.body.transactions.map((x: { hash: string }) => x.hash)).toEqual([...phase(['activate', 'top_up']), ...phase(['delegate']), ...phase(['transfer']), ...phase(['undelegate'])]);
    expect(sent.body.transactions.every((x: { status: string }) => x.status === 'success')).toBe(true);

    // A replay changes nothing.
    const replay = await broadcast(id, signed);
    expect({ status: replay.status, code: replay.body.error?.code }).toEqual({ status: 409, code: 'invalid_state' });
    expect(tron.chain.pending).toBe(0);

    // The money: the destination holds exactly the total; no source holds any; the energy is back; the TRX burned is within the plan.
    const total = p.sources.reduce((s: bigint, x: { amountMinor: string }) => s + BigInt(x.amountMinor), 0n);
    expect(total).toBe(13_200_001n);
    expect(await tokenOf(destination)).toBe(total);
    for (const a of paid) expect(await tokenOf(a)).toBe(0n);
    expect(tron.accounts.canDelegateSun(hex41(funding))).toBe(staked);
    for (const a of paid) expect(tron.accounts.delegatedInSun(hex41(a))).toBe(0n);
    const burned = tron.accounts.burnedBy(hex41(funding)) + paid.reduce((s, a) => s + tron.accounts.burnedBy(hex41(a)), 0n);
    expect(burned > 0n && burned <= BigInt(p.trxBurnedSun)).toBe(true);
    expect(fundingBefore - tron.trxOf(funding)).toBe(tron.accounts.burnedBy(hex41(funding)) + BigInt(p.topUpWei));
    for (const a of paid) expect(tron.accounts.energyUsedBy(hex41(a)) > 0n).toBe(true); // the transfers ran on lent energy
    console.log(`TRON energy delegation broadcast, 3 sources: ${Number(burned) / 1e6} TRX burned (plan said at most ${Number(p.trxBurnedSun) / 1e6})`);

    // In blocks, not yet solidified: mined. Once the solidified block passes them: final, sweep.completed once.
    const mined = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(mined.body).toMatchObject({ id, rail: 'USDT_TRON', kind: 'energy_delegation', state: 'mined', totalToken: '13.200001' });
    expect(mined.body.transactions.map((x: { kind: string }) => x.kind).sort()).toEqual(['delegate', 'delegate', 'delegate', 'top_up', 'top_up', 'top_up', 'transfer', 'transfer', 'transfer', 'undelegate', 'undelegate', 'undelegate']);
    expect(await events('sweep.completed', id)).toEqual([]);
    tron.chain.mine(solidifyLag + 1);
    const final = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(final.body).toMatchObject({ state: 'final', movedToken: '13.200001' });
    expect(final.body.transactions.every((x: { state: string }) => x.state === 'final')).toBe(true);
    const lent = final.body.transactions.filter((x: { kind: string }) => x.kind === 'delegate');
    expect(lent.every((x: { from: string; amount: string }) => x.from === funding && Number(x.amount) > 0)).toBe(true);
    expect(await events('sweep.completed', id)).toHaveLength(1);
    expect(await ledgerRows(id)).toBe(txs.length);

    // The reconciler: every swept address explained by its deposit less its sweep; no finding.
    expect(await reconcile()).toMatchObject({ mismatches: 0, outflows: 0 });
    const findings = await stack.pool.anyFirst(sql.type(z.object({ kind: z.string() }))`
      SELECT kind FROM reconciliation_findings WHERE address = ANY(${sql.array(paid, 'text')})`);
    expect(findings).toEqual([]);
    const balances = await stack.request({ method: 'GET', url: '/v1/treasury/balances?rail=USDT_TRON', key });
    expect(balances.body.data[0]).toMatchObject({ status: 'read', totalToken: '0' });
  }, 120_000);

  it('TRX top-ups: each source burns TRX for its energy; a source emptied meanwhile leaves the sweep partially completed', async () => {
    const paid = await payLinks([4_000_000n, 1_000_000n]);
    const funding = addressAt("m/44'/195'/0'/0/1");
    tron.setTrx(funding, 200_000_000n);
    const planned = await plan(funding);
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    expect(planned.body.plan.kind).toBe('trx_top_ups');
    const signed = signOffline(planned.body, ['--funding-path', "m/44'/195'/0'/0/1"]);
    // After planning, the second source's USDT left it by other means: its transfer reverts on chain.
    tron.setBalance(usdt, paid[1]!, 0n);
    const destinationBefore = await tokenOf(destination);

    mineMeanwhile();
    const sent = await broadcast(id, signed);
    clearInterval(miner);
    expect(sent.status).toBe(200);
    const outcome = Object.fromEntries(sent.body.transactions.filter((x: { kind: string }) => x.kind === 'transfer').map((x: { hash: string; status: string }) => [x.hash, x.status]));
    const transferOf = (a: string) => (planned.body.plan.transactions as PlanTx[]).find((x) => x.kind === 'transfer' && x.source === a)!.txID;
    expect(outcome).toEqual({ [transferOf(paid[0]!)]: 'success', [transferOf(paid[1]!)]: 'reverted' });
    expect((await tokenOf(destination)) - destinationBefore).toBe(4_000_000n);
    // The first source's energy was paid in TRX (no delegation), from its top-up.
    expect(tron.accounts.burnedBy(hex41(paid[0]!)) > 0n).toBe(true);

    tron.chain.mine(solidifyLag + 1);
    const ended = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(ended.body).toMatchObject({ kind: 'top_up', state: 'partially_completed', movedToken: '4' });
    expect(ended.body.transactions.find((x: { hash: string }) => x.hash === transferOf(paid[1]!)).state).toBe('failed');
    expect(await events('sweep.failed', id)).toHaveLength(1);
  }, 120_000);

  it('a broadcast whose process died after its first transaction: left alone while a broadcast may run, then followed and ended by the follower; a new plan sends no second top-up', async () => {
    await payLinks([3_000_000n]);
    const funding = addressAt("m/44'/195'/0'/0/2");
    tron.setTrx(funding, 100_000_000n);
    const planned = await plan(funding);
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const signed = signOffline(planned.body, ['--funding-path', "m/44'/195'/0'/0/2"]);
    // The process that broadcast it claimed it, recorded its first transaction, sent it, and died (no answer, no end recorded).
    const scope = { storeId: store.clientId, environment: 'test' as const };
    expect(await claimSweepBroadcast(stack.pool, scope.storeId, scope.environment, id)).toBe(true);
    const first = JSON.parse(signed.transactions[0]!.raw);
    await sweepLedgerHooks(stack.pool, scope, id, 'USDT_TRON', planned.body.plan, destination).beforeSend(0, first.txID);
    const sent = await fetch(`${tron.url}/wallet/broadcasttransaction`, { method: 'POST', body: JSON.stringify(first) }).then((r) => r.json());
    expect(sent).toMatchObject({ result: true, txid: first.txID });
    tron.chain.mine(solidifyLag + 2);

    // While a broadcast may still be running, the follower leaves it alone.
    await followSweeps({ pool: stack.pool, rails: stack.config.rails }, 'USDT_TRON', 'test');
    const running = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(running.body).toMatchObject({ state: 'broadcast', transactions: [{ kind: 'top_up', state: 'broadcast' }] });
    // Twenty minutes on, it is the follower's: the top-up is final, no transfer was ever sent: failed, one sweep.failed.
    await stack.pool.query(sql.unsafe`UPDATE sweep_plans SET broadcast_at = broadcast_at - interval '21 minutes' WHERE id = ${id}`);
    await followSweeps({ pool: stack.pool, rails: stack.config.rails }, 'USDT_TRON', 'test');
    const ended = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(ended.body).toMatchObject({ state: 'failed', movedToken: '0', transactions: [{ kind: 'top_up', state: 'final', hash: first.txID }] });
    expect(await events('sweep.failed', id)).toHaveLength(1);
    // Planned again: the TRX that top-up sent is on the source, so nothing is sent to it twice.
    const again = await plan(funding);
    expect(again.status).toBe(201);
    expect((again.body.plan.transactions as PlanTx[]).map((x) => x.kind)).toEqual(['transfer']);
  }, 120_000);

  it('a broadcast whose process died right after the node took a transfer: the ledger has it, the follower takes it to final, one sweep.completed', async () => {
    const [source] = await payLinks([5_000_000n]);
    const funding = addressAt("m/44'/195'/0'/0/3");
    tron.setTrx(funding, 100_000_000n);
    const planned = await plan(funding);
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const txs: PlanTx[] = planned.body.plan.transactions;
    const signed = signOffline(planned.body, ['--funding-path', "m/44'/195'/0'/0/3"]);
    const cut = txs.find((x) => x.kind === 'transfer' && x.source === source)!;
    // The node takes the source's transfer into its pool, and the broadcasting process never hears back: it is gone.
    const proxy = await startCuttingProxy(tron.url, (path, body) => path === '/wallet/broadcasttransaction' && body.includes(cut.txID));
    const scope = { storeId: store.clientId, environment: 'test' as const };
    mineMeanwhile();
    try {
      const rails = railsThrough(stack.config.rails, 'USDT_TRON', proxy.url);
      const claim = () => claimSweepBroadcast(stack.pool, scope.storeId, scope.environment, id);
      const hooks = sweepLedgerHooks(stack.pool, scope, id, 'USDT_TRON', planned.body.plan, destination);
      await expect(adapterOf('USDT_TRON').broadcastSweep!(rails, 'USDT_TRON', 'test', planned.body.plan, signed.transactions.map((t) => t.raw), claim, hooks)).rejects.toThrow();
    } finally {
      clearInterval(miner);
      await proxy.close();
    }
    expect(proxy.cut()).toHaveLength(1);
    tron.chain.mine(1);
    expect(await tokenOf(source!)).toBe(0n);

    // The ledger knows the transfer the dead process sent, under its txID.
    const rows = await stack.pool.any(sql.type(z.object({ seq: z.number(), tx_hash: z.string(), state: z.string() }))`
      SELECT seq, tx_hash, state FROM sweep_transactions WHERE plan_id = ${id} ORDER BY seq`);
    expect(rows.map((r) => r.seq)).toEqual(txs.map((_t, i) => i));
    expect(rows.find((r) => r.tx_hash === cut.txID)).toMatchObject({ state: 'broadcast' });

    // The broadcast never said it ended; twenty minutes on, the follower owns it: mined, then final at the solidified block.
    await stack.pool.query(sql.unsafe`UPDATE sweep_plans SET broadcast_at = broadcast_at - interval '21 minutes' WHERE id = ${id}`);
    tron.chain.mine(solidifyLag + 1);
    await followSweeps({ pool: stack.pool, rails: stack.config.rails }, 'USDT_TRON', 'test');
    await followSweeps({ pool: stack.pool, rails: stack.config.rails }, 'USDT_TRON', 'test');
    const final = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    const total = (planned.body.plan.sources as Array<{ amountMinor: string }>).reduce((s, x) => s + BigInt(x.amountMinor), 0n);
    expect(final.body).toMatchObject({ state: 'final', movedToken: formatUnits(total, 6) });
    expect(final.body.transactions.every((x: { state: string }) => x.state === 'final')).toBe(true);
    expect(await events('sweep.completed', id)).toHaveLength(1);
    expect(await events('sweep.failed', id)).toEqual([]);
    expect(await reconcile()).toMatchObject({ outflows: 0 });
    // Recording it again (a retried hook) changes nothing: one row per place, its state kept.
    await sweepLedgerHooks(stack.pool, scope, id, 'USDT_TRON', planned.body.plan, destination).beforeSend(txs.indexOf(cut), cut.txID);
    const again = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(again.body.transactions).toEqual(final.body.transactions);
  }, 120_000);

  it('a node refusal (the funding account emptied after signing): the top-up is recorded dropped, not live, and the sweep ends failed with one sweep.failed', async () => {
    const [source] = await payLinks([1_000_000n]);
    const funding = addressAt("m/44'/195'/0'/0/4");
    tron.setTrx(funding, 100_000_000n);
    const planned = await plan(funding);
    expect(planned.status).toBe(201);
    const id = planned.body.id as string;
    const signed = signOffline(planned.body, ['--funding-path', "m/44'/195'/0'/0/4"]);
    const txs: PlanTx[] = planned.body.plan.transactions;
    const first = txs.find((x) => x.kind === 'activate' || x.kind === 'top_up')!;
    expect(txs[0]).toBe(first);
    tron.setTrx(funding, 0n);
    const refused = await broadcast(id, signed);
    expect(refused.status).toBe(502);
    expect(refused.body.error.message).toMatch(/The node refused transaction 0/);
    const got = await stack.request({ method: 'GET', url: `/v1/sweeps/${id}`, key });
    expect(got.body.state).toBe('failed');
    // Nothing claims a live transaction: the refused top-up is dropped, nothing else was sent.
    expect(got.body.transactions.map((x: { kind: string; state: string; hash: string }) => `${x.kind}:${x.state}:${x.hash}`)).toEqual([`top_up:dropped:${first.txID}`]);
    expect(await events('sweep.failed', id)).toHaveLength(1);
    tron.chain.mine(solidifyLag + 1);
    await followSweeps({ pool: stack.pool, rails: stack.config.rails }, 'USDT_TRON', 'test');
    expect(await events('sweep.failed', id)).toHaveLength(1);
    expect(await events('sweep.completed', id)).toEqual([]);
    expect(await tokenOf(source!)).toBe(1_000_000n);
  }, 120_000);
});
