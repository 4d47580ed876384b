import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recoverAddress } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { sql } from 'slonik';
import { utils } from 'tronweb';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { chainFees } from '../../emulators/trongrid/accounts.js';
import { transferEnergy, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { tronAddress, tronAddressFromBytes, tronAddressToEvmHex } from '../../rails/tron/address.js';
import { tronBandwidth } from '../../rails/tron/transaction.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { sweepingStore, tronSweepChain } from '../helpers/sweep-store.js';

/**
 * TRON sweep plans (docs/treasury.md, "TRON sweep plans") on the TronGrid emulator: links paid in
 * USDT, then a plan of each kind: energy delegated from a staked funding account (Stake 2.0), or
 * TRX top-ups when it has none staked. Every transaction is an unsigned TRON transaction whose
 * raw_data TronWeb encodes to its raw_data_hex and txID, referencing the head block.
 */
const randomTron = () => tronAddressFromBytes(randomBytes(20));
const usdt = randomTron();
const destination = randomTron();
let tron: TronGridEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;

interface PlanTx { kind: string; from: string; source: string; value: string; txID: string; raw_data: any; raw_data_hex: string }

const plan = (fundingAddress: string) => stack.request({ method: 'POST', url: '/v1/sweeps', key, payload: { rail: 'USDT_TRON', destination, fundingAddress } });
const planCount = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM sweep_plans`);
const paid: string[] = [];

beforeAll(async () => {
  tron = await tronSweepChain(usdt);
  stack = await startStack({ RPC_URL_USDT_TRON_TEST: tron.url, USDT_CONTRACT_USDT_TRON_TEST: usdt, TREASURY_DESTINATION_DELAY_SECONDS: '0' });
  ({ store, key } = await sweepingStore(stack, 'TRON sweeps', ['USDT_TRON'], destination));
  for (const amount of [10_000_000n, 2_500_001n, 700_000n]) {
    const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_TRON'] } });
    expect(link.status).toBe(201);
    tron.setBalance(usdt, link.body.tronAddress, amount);
    paid.push(link.body.tronAddress);
  }
  // One source has an account already (it once received TRX) and a little TRX.
  tron.setTrx(paid[0]!, 50_000n);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await tron?.close();
});

/** Each transaction is what TronWeb would sign: its JSON encodes to its hex, whose SHA-256 is its txID; it references the head and expires with the plan. */
function expectSignable(txs: PlanTx[], expiresAtMs: number) {
  const head = tron.chain.head;
  for (const tx of txs) {
    expect(utils.transaction.txCheck(tx as never)).toBe(true);
    expect(utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb(tx as never)).toLowerCase()).toBe(tx.raw_data_hex);
    expect(tx.raw_data.ref_block_bytes).toBe(head.number.toString(16).padStart(16, '0').slice(12));
    expect(tx.raw_data.ref_block_hash).toBe(head.hash.slice(2 + 16, 2 + 32));
    expect(tx.raw_data.expiration).toBe(expiresAtMs);
    expect(tx.raw_data.contract[0].parameter.value.owner_address).toBe(tx.from);
  }
}

const transferData = (amount: bigint) => `a9059cbb${tronAddressToEvmHex(destination).slice(2).padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;

describe('POST /v1/sweeps (TRON)', () => {
  it('plans energy delegation from a staked funding account: delegate, transfer on free bandwidth, undelegate; TRX burned shown', async () => {
    const funding = randomTron();
    tron.setTrx(funding, 100_000_000n);
    tron.stakeForEnergy(funding, 100_000_000_000n); // 100,000 TRX staked for energy
    const res = await plan(funding);
    expect(res.status).toBe(201);
    const body = res.body;
    const p = body.plan;
    expect(p).toMatchObject({ network: 'tron', kind: 'energy_delegation', token: usdt, destination, funding, blockNumber: String(tron.chain.head.number) });
    expect(body.totalToken).toBe('13.200001');
    expect(body.cost.nativeCoin).toBe('TRX');
    expect(p.sources.map((s: { address: string }) => s.address).sort()).toEqual([...paid].sort());
    for (const s of p.sources) expect(s.path).toMatch(/^m\/44'\/195'\/0'\/1\/\d+$/);

    const energy = BigInt(Math.ceil(transferEnergy(false) * 1.1));
    expect(p.energyPerTransfer).toBe(energy.toString());
    const stake = ((energy * 19_000_000_000n + 179_999_999_999n) / 180_000_000_000n) * 1_000_000n;
    const txs: PlanTx[] = p.transactions;
    // Two sources have no account yet: 1 sun creates each; every source gets the energy, moves its USDT, gives the energy back.
    const kinds = txs.map((t) => `${t.kind}:${t.source}`);
    const order = (kind: string) => txs.map((t, i) => (t.kind === kind ? i : -1)).filter((i) => i >= 0);
    expect(order('activate').map((i) => txs[i]!.source).sort()).toEqual([paid[1]!, paid[2]!].sort());
    expect(order('delegate')).toHaveLength(3);
    expect(order('transfer')).toHaveLength(3);
    expect(order('undelegate')).toHaveLength(3);
    expect(order('top_up')).toEqual([]);
    expect(Math.max(...order('delegate'), ...order('activate'))).toBeLessThan(Math.min(...order('transfer')));
    expect(Math.max(...order('transfer'))).toBeLessThan(Math.min(...order('undelegate')));
    expect(new Set(kinds).size).toBe(kinds.length);
    for (const i of order('delegate')) {
      expect(txs[i]!.raw_data.contract[0]).toMatchObject({ type: 'DelegateResourceContract', parameter: { value: { owner_address: funding, receiver_address: txs[i]!.source, balance: Number(stake), resource: 'ENERGY' } } });
    }
    for (const i of order('transfer')) {
      const source = p.sources.find((s: { address: string }) => s.address === txs[i]!.source);
      expect(txs[i]!.raw_data.contract[0]).toMatchObject({ type: 'TriggerSmartContract', parameter: { value: { owner_address: source.address, contract_address: usdt, data: transferData(BigInt(source.amountMinor)) } } });
      expect(txs[i]!.raw_data.fee_limit).toBe(Number(energy) * chainFees.getEnergyFee);
    }
    expectSignable(txs, p.expiresAtMs);
    expect(p.delegatedSun).toBe((stake * 3n).toString());

    // TRX burned: the two new accounts, and at most the funding account's bandwidth; the transfers burn nothing (energy lent, free bandwidth).
    const fundingTxs = txs.filter((t) => t.from === funding);
    const burned = 2n * BigInt(chainFees.getCreateNewAccountFeeInSystemContract) + fundingTxs.reduce((s, t) => s + tronBandwidth(t.raw_data_hex) * BigInt(chainFees.getTransactionFee), 0n);
    expect(p.trxBurnedSun).toBe(burned.toString());
    expect(body.cost.maxFee).toBe((Number(burned) / 1e6).toString());
    expect(body.cost.topUps).toBe('0.000002');
    console.log(`TRON energy delegation, 3 sources: ${txs.length} transactions, at most ${Number(burned) / 1e6} TRX burned (${Number(burned) / 3e6} per swept address)`);

    // The same chain state gives the same plan.
    const again = await plan(funding);
    expect(again.body.plan.transactions.map((t: PlanTx) => t.txID)).toEqual(txs.map((t) => t.txID));
  });

  it('plans TRX top-ups when the funding account has no staked energy: each source gets what its transfer burns', async () => {
    const funding = randomTron();
    tron.setTrx(funding, 1_000_000_000n);
    // The source with an account has used its free bandwidth today: its transfer burns TRX for it.
    tron.accounts.useFreeBandwidth(`41${tronAddressToEvmHex(paid[0]!).slice(2)}`, 600);
    const res = await plan(funding);
    expect(res.status).toBe(201);
    const p = res.body.plan;
    expect(p).toMatchObject({ kind: 'trx_top_ups', delegatableSun: '0', delegatedSun: '0' });
    const txs: PlanTx[] = p.transactions;
    expect(txs.map((t) => t.kind)).toEqual(['top_up', 'top_up', 'top_up', 'transfer', 'transfer', 'transfer']);
    const energy = BigInt(p.energyPerTransfer);
    let burned = 2n * BigInt(chainFees.getCreateNewAccountFeeInSystemContract);
    for (const top of txs.filter((t) => t.kind === 'top_up')) {
      const source = p.sources.find((s: { address: string }) => s.address === top.source);
      const transfer = txs.find((t) => t.kind === 'transfer' && t.source === top.source)!;
      // A new account has its free 600 a day once created; the source that used its own burns TRX for the transfer's bytes.
      expect(source.bandwidth).toBe(source.address === paid[0] ? '0' : '600');
      const bandwidth = source.address === paid[0] ? tronBandwidth(transfer.raw_data_hex) * BigInt(chainFees.getTransactionFee) : 0n;
      const needs = energy * BigInt(chainFees.getEnergyFee) + bandwidth;
      expect(top.value).toBe((needs - BigInt(source.trxSun)).toString());
      expect(top.raw_data.contract[0]).toMatchObject({ type: 'TransferContract', parameter: { value: { owner_address: funding, to_address: top.source, amount: Number(top.value) } } });
      burned += needs + tronBandwidth(top.raw_data_hex) * BigInt(chainFees.getTransactionFee);
    }
    expect(p.trxBurnedSun).toBe(burned.toString());
    expectSignable(txs, p.expiresAtMs);
    console.log(`TRON TRX top-ups, 3 sources: at most ${Number(burned) / 1e6} TRX burned (${Number(burned) / 3e6} per swept address)`);
  });

  it('is signed offline by sweep:sign with the test mnemonic, with no network: every signature recovers to its owner', async () => {
    const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
    const funding = tronAddress(Buffer.from(mnemonicToAccount(mnemonic, { path: "m/44'/195'/0'/0/0" as never }).publicKey.slice(4), 'hex'));
    tron.setTrx(funding, 100_000_000n);
    tron.stakeForEnergy(funding, 100_000_000_000n);
    const res = await plan(funding);
    expect(res.status).toBe(201);
    const dir = mkdtempSync(join(tmpdir(), 'tron-sweep-'));
    writeFileSync(join(dir, 'mnemonic.txt'), mnemonic);
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(res.body));
    const r = spawnSync(process.execPath, ['--import', './test/helpers/no-network.mjs', 'bin/sweep-sign.mjs', join(dir, 'plan.json'), '--mnemonic-file', join(dir, 'mnemonic.txt')], { encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toContain('13.200001 USDT');
    const signed = JSON.parse(readFileSync(join(dir, 'plan.signed.json'), 'utf8'));
    expect(signed.planId).toBe(res.body.id);
    const txs: PlanTx[] = res.body.plan.transactions;
    expect(signed.transactions).toHaveLength(txs.length);
    for (const [i, s] of signed.transactions.entries()) {
      const out = JSON.parse(s.raw);
      expect(out.raw_data_hex).toBe(txs[i]!.raw_data_hex);
      const signer = await recoverAddress({ hash: `0x${out.txID}`, signature: `0x${out.signature[0]}` });
      expect(tronAddressFromBytes(Buffer.from(signer.slice(2), 'hex'))).toBe(txs[i]!.from);
    }
  });

  it('refuses a funding account that cannot pay, one with no account, and an EVM destination, storing nothing', async () => {
    const before = await planCount();
    const poor = randomTron();
    tron.setTrx(poor, 10n);
    const short = await plan(poor);
    expect({ status: short.status, code: short.body.error?.code }).toEqual({ status: 409, code: 'invalid_state' });
    expect(short.body.error.message).toMatch(/funding address holds 10 sun/);
    const none = await plan(randomTron());
    expect(none.status).toBe(409);
    expect(none.body.error.message).toMatch(/no account on TRON/);
    const evm = await stack.request({ method: 'POST', url: '/v1/sweeps', key, payload: { rail: 'USDT_TRON', destination: '0x52908400098527886e0f7030069857d2e4169ee7', fundingAddress: poor } });
    expect({ status: evm.status, param: evm.body.error?.param }).toEqual({ status: 400, param: 'destination' });
    const badFunding = await stack.request({ method: 'POST', url: '/v1/sweeps', key, payload: { rail: 'USDT_TRON', destination, fundingAddress: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb' } });
    expect({ status: badFunding.status, param: badFunding.body.error?.param }).toEqual({ status: 400, param: 'fundingAddress' });
    expect(await planCount()).toBe(before);
  });
});
