import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'slonik';
import { encodeFunctionData, erc20Abi, parseEther, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { deployMulticall3 } from '../helpers/multicall.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { sweepingStore } from '../helpers/sweep-store.js';

/**
 * EVM sweep plans on anvil (docs/treasury.md): the plan's unsigned transactions, signed here with
 * the test mnemonic (the service never sees it) and with the funding account, move every token
 * to the destination; the same chain state gives the same plan; a re-plan after the top-ups
 * alone were broadcast tops up nothing twice and reuses no nonce; refused requests change nothing.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

interface PlanTx { kind: 'top_up' | 'transfer'; from: string; to: string; value: string; data: Hex; nonce: number; gas: string; maxFeePerGas: string; maxPriorityFeePerGas: string; chainId: number }

let anvil: Anvil;
let usdt: TestToken;
let stack: Stack;
let store: CreatedStore;
let key: string;
let funding: Address;
let destination: Address;

const usdt18 = (n: bigint) => n * 10n ** 18n;
const planCount = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM sweep_plans`);
const plan = (payload: Record<string, string>) => stack.request({ method: 'POST', url: '/v1/sweeps', key, payload });

async function newPaidLink(amount: bigint): Promise<Address> {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'] } });
  expect(res.status).toBe(201);
  await usdt.mint(res.body.bscAddress, amount);
  return (res.body.bscAddress as string).toLowerCase() as Address;
}

/** Sends the plan's transactions of `kind` as they are: top-ups from the unlocked funding account, transfers signed with each source's key. */
async function broadcast(body: { plan: { sources: { address: string; path: string }[]; transactions: PlanTx[] } }, kind: PlanTx['kind']): Promise<void> {
  for (const tx of body.plan.transactions.filter((t) => t.kind === kind)) {
    const fields = {
      type: 'eip1559' as const, chainId: tx.chainId, nonce: tx.nonce, gas: BigInt(tx.gas), maxFeePerGas: BigInt(tx.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(tx.maxPriorityFeePerGas), to: tx.to as Address, value: BigInt(tx.value), data: tx.data,
    };
    let hash: Hex;
    if (kind === 'top_up') {
      hash = await anvil.walletClient.sendTransaction({ ...fields, account: tx.from as Address, chain: anvil.walletClient.chain });
    } else {
      const path = body.plan.sources.find((s) => s.address === tx.from)!.path as `m/44'/60'/${string}`;
      const signer = mnemonicToAccount(mnemonic, { path });
      expect(signer.address.toLowerCase()).toBe(tx.from);
      hash = (await anvil.rpc('eth_sendRawTransaction', [await signer.signTransaction(fields)])) as Hex;
    }
    const receipt = await anvil.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    gasUsed[kind].push(receipt.gasUsed);
  }
}

/** Gas each broadcast transaction used, by kind: printed at the end (docs/treasury.md quotes it). */
const gasUsed: Record<PlanTx['kind'], bigint[]> = { top_up: [], transfer: [] };

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  await deployMulticall3(anvil);
  funding = anvil.accounts[2]!;
  destination = anvil.accounts[5]!;
  stack = await startStack({ USDT_CONTRACT_USDT_BSC_TEST: usdt.address, RPC_URL_USDT_BSC_TEST: anvil.url, TREASURY_DESTINATION_DELAY_SECONDS: '0', TEST_NATIVE_USD_PRICES: 'BNB=612.34' });
  ({ store, key } = await sweepingStore(stack, 'Sweeping shop', ['USDT_BSC'], destination));
}, 120_000);

afterAll(async () => {
  console.log(`gas per swept address: top-up ${gasUsed.top_up.join(', ')}; token transfer ${gasUsed.transfer.join(', ')}`);
  await stack?.stop();
  await anvil?.stop();
});

describe('POST /v1/sweeps (EVM)', () => {
  it('answers a secret key only', async () => {
    await expectSecretKeyRequired(stack, { method: 'POST', url: '/v1/sweeps', payload: { rail: 'USDT_BSC', destination, fundingAddress: funding } });
  });

  it('refuses a bad request and changes nothing', async () => {
    await newPaidLink(usdt18(1n));
    const before = await planCount();
    const pending = '0x000000000000000000000000000000000000dEaD';
    await stack.pool.query(sql.unsafe`INSERT INTO sweep_destinations (id, store_id, environment, rail, address, label, added_by, usable_at)
      VALUES ('sdst_pending', ${store.clientId}, 'test', 'USDT_BSC', ${pending.toLowerCase()}, '', 'usr_x', now() + interval '1 day')`);
    const cases: [Record<string, string>, number, string, string | undefined][] = [
      [{ rail: 'USDT_BSC', destination: anvil.accounts[6]!, fundingAddress: funding }, 400, 'invalid_field', 'destination'],
      [{ rail: 'USDT_BSC', destination: pending, fundingAddress: funding }, 409, 'invalid_state', 'destination'],
      [{ rail: 'USDT_BSC', destination, fundingAddress: 'nope' }, 400, 'invalid_field', 'fundingAddress'],
      [{ rail: 'USDT_SOL', destination, fundingAddress: funding }, 400, 'invalid_field', 'rail'],
      // An EVM address is no TRON destination (TRON's plans: treasury-sweeps-tron.test.ts).
      [{ rail: 'USDT_TRON', destination, fundingAddress: funding }, 400, 'invalid_field', 'destination'],
    ];
    for (const [payload, status, code, param] of cases) {
      const res = await plan(payload);
      expect({ payload, status: res.status, code: res.body.error?.code, param: res.body.error?.param }).toEqual({ payload, status, code, param });
    }
    // A funding address without the gas the top-ups need.
    const broke = await plan({ rail: 'USDT_BSC', destination, fundingAddress: '0x1111111111111111111111111111111111111111' });
    expect(broke.status).toBe(409);
    expect(broke.body.error.message).toMatch(/funding address holds 0 wei/);
    expect(await planCount()).toBe(before);
  });

  it('plans deterministically, and the plan signed offline moves every token to the destination', async () => {
    const gassy = await newPaidLink(usdt18(10n));
    await newPaidLink(2_500_000_000_000_000_001n);
    await anvil.rpc('anvil_setBalance', [gassy, `0x${parseEther('1').toString(16)}`]);
    const sources = [...(await stack.request({ method: 'GET', url: '/v1/treasury/balances?rail=USDT_BSC&limit=500', key })).body.data[0].addresses]
      .filter((a: { tokenBalance: string }) => a.tokenBalance !== '0');
    const total = (await Promise.all(sources.map((a: { address: Address }) => usdt.balanceOf(a.address)))).reduce((s, b) => s + b, 0n);
    const destinationBefore = await usdt.balanceOf(destination);

    const first = await plan({ rail: 'USDT_BSC', destination, fundingAddress: funding });
    expect(first.status).toBe(201);
    const second = await plan({ rail: 'USDT_BSC', destination, fundingAddress: funding });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.plan).toEqual(first.body.plan);
    expect(Date.parse(first.body.expiresAt) - Date.parse(first.body.createdAt)).toBe(15 * 60_000);

    const p = first.body.plan;
    expect(p.chainId).toBe(anvil.chainId);
    expect(p.destination).toBe(destination.toLowerCase());
    expect(p.sources.map((s: { address: string }) => s.address)).toEqual(sources.map((s: { address: string }) => s.address));
    expect(p.sources.reduce((s: bigint, x: { amountMinor: string }) => s + BigInt(x.amountMinor), 0n)).toBe(total);
    const txs = p.transactions as PlanTx[];
    const topUps = txs.filter((t) => t.kind === 'top_up');
    const transfers = txs.filter((t) => t.kind === 'transfer');
    // The address with gas of its own gets no top-up; every other source one, from consecutive funding nonces.
    expect(topUps.map((t) => t.to).sort()).toEqual(sources.map((s: { address: string }) => s.address).filter((a: string) => a !== gassy).sort());
    const fundingNonce = await anvil.publicClient.getTransactionCount({ address: funding });
    expect(topUps.map((t) => t.nonce)).toEqual(topUps.map((_, i) => fundingNonce + i));
    expect(transfers).toHaveLength(sources.length);
    expect(transfers.every((t) => t.nonce === 0 && t.to === usdt.address.toLowerCase() && t.value === '0')).toBe(true);
    expect(txs.indexOf(topUps.at(-1)!)).toBeLessThan(txs.indexOf(transfers[0]!));
    // The most the fees burn, priced at the configured BNB/USD price: wei × 61234000000 (10^-8 USD) in 10^-6 USD, rounded up.
    const micro = (BigInt(first.body.plan.maxFeeWei) * 61_234_000_000n + 10n ** 20n - 1n) / 10n ** 20n;
    expect(first.body.cost).toEqual({
      nativeCoin: 'BNB', maxFee: expect.any(String), topUps: expect.any(String), usdPrice: '612.34', usdOmitted: null,
      usd: `${micro / 1_000_000n}.${(micro % 1_000_000n).toString().padStart(6, '0')}`.replace(/\.?0+$/, ''),
    });
    expect(micro > 0n).toBe(true);

    await broadcast(first.body, 'top_up');
    await broadcast(first.body, 'transfer');
    expect(await usdt.balanceOf(destination)).toBe(destinationBefore + total);
    for (const s of sources) expect(await usdt.balanceOf(s.address)).toBe(0n);
    // Nothing left to sweep now.
    const after = await plan({ rail: 'USDT_BSC', destination, fundingAddress: funding });
    expect(after.status).toBe(409);
  }, 60_000);

  it('re-planned after only the top-ups were broadcast: no second top-up, the same transfer nonces', async () => {
    const a = await newPaidLink(usdt18(3n));
    const b = await newPaidLink(usdt18(4n));
    const first = await plan({ rail: 'USDT_BSC', destination, fundingAddress: funding });
    expect(first.status).toBe(201);
    expect((first.body.plan.transactions as PlanTx[]).filter((t) => t.kind === 'top_up')).toHaveLength(2);
    await broadcast(first.body, 'top_up');
    const fundingAfter = await anvil.publicClient.getBalance({ address: funding });

    const again = await plan({ rail: 'USDT_BSC', destination, fundingAddress: funding });
    expect(again.status).toBe(201);
    const txs = again.body.plan.transactions as PlanTx[];
    expect(txs.filter((t) => t.kind === 'top_up')).toEqual([]);
    expect(again.body.cost.topUps).toBe('0');
    expect(txs.map((t) => [t.from, t.nonce]).sort()).toEqual([[a, 0], [b, 0]].sort());
    await broadcast(again.body, 'transfer');
    expect(await usdt.balanceOf(a)).toBe(0n);
    expect(await usdt.balanceOf(b)).toBe(0n);
    expect(await anvil.publicClient.getBalance({ address: funding })).toBe(fundingAfter);
  }, 60_000);
});

describe('the offline signer and POST /v1/sweeps/:id/broadcast', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sweep-'));
  const mnemonicFile = join(dir, 'mnemonic.txt');
  writeFileSync(mnemonicFile, mnemonic);
  // The merchant's funding account: the mnemonic's first receive address, holding gas.
  const fundingAccount = mnemonicToAccount(mnemonic, { path: "m/44'/60'/0'/0/0" });
  const broadcastPlan = (id: string, payload: unknown) => stack.request({ method: 'POST', url: `/v1/sweeps/${id}/broadcast`, key, payload });

  /** Runs the signer as the merchant would, with every socket forbidden; answers its output file. */
  function signOffline(answer: unknown): { transactions: { raw: Hex; kind: string; from: string }[] } {
    const planFile = join(dir, `plan-${Date.now()}.json`);
    const out = `${planFile}.signed`;
    writeFileSync(planFile, JSON.stringify(answer));
    const r = spawnSync(process.execPath, ['--import', './test/helpers/no-network.mjs', 'bin/sweep-sign.mjs', planFile, '--mnemonic-file', mnemonicFile, '--out', out], { encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    return JSON.parse(readFileSync(out, 'utf8'));
  }

  beforeAll(async () => {
    await anvil.rpc('anvil_setBalance', [fundingAccount.address, `0x${parseEther('10').toString(16)}`]);
  });

  it('broadcasts the signed plan in order; an altered transaction and a replay are refused and change nothing', async () => {
    const a = await newPaidLink(usdt18(6n));
    const b = await newPaidLink(usdt18(7n));
    const res = await plan({ rail: 'USDT_BSC', destination, fundingAddress: fundingAccount.address });
    expect(res.status).toBe(201);
    const signed = signOffline(res.body);
    expect(signed.transactions.map((t) => t.kind)).toEqual(['top_up', 'top_up', 'transfer', 'transfer']);
    const before = { dest: await usdt.balanceOf(destination), a: await usdt.balanceOf(a), fundingNonce: await anvil.publicClient.getTransactionCount({ address: fundingAccount.address }) };

    // A transfer re-signed by its own source, to another recipient: refused, nothing sent.
    const tampered = structuredClone(signed);
    const t = res.body.plan.transactions[2] as PlanTx;
    const source = res.body.plan.sources.find((x: { address: string }) => x.address === t.from);
    tampered.transactions[2]!.raw = await mnemonicToAccount(mnemonic, { path: source.path }).signTransaction({
      type: 'eip1559', chainId: t.chainId, nonce: t.nonce, gas: BigInt(t.gas), maxFeePerGas: BigInt(t.maxFeePerGas), maxPriorityFeePerGas: BigInt(t.maxPriorityFeePerGas),
      to: t.to as Address, value: 0n, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [anvil.accounts[7]!, BigInt(source.amountMinor)] }),
    });
    const refused = await broadcastPlan(res.body.id, tampered);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/Transaction 2 \(transfer\) differs from the plan in its recipient, token or amount/);
    const dropped = structuredClone(signed);
    dropped.transactions.pop();
    expect((await broadcastPlan(res.body.id, dropped)).status).toBe(409);
    expect(await anvil.publicClient.getTransactionCount({ address: fundingAccount.address })).toBe(before.fundingNonce);
    expect(await usdt.balanceOf(a)).toBe(before.a);

    const sent = await broadcastPlan(res.body.id, signed);
    expect(sent.status).toBe(200);
    expect(sent.body.transactions.map((x: { kind: string; status: string }) => `${x.kind}:${x.status}`)).toEqual(['top_up:success', 'top_up:success', 'transfer:success', 'transfer:success']);
    expect(await usdt.balanceOf(destination)).toBe(before.dest + usdt18(13n));
    expect(await usdt.balanceOf(a)).toBe(0n);
    expect(await usdt.balanceOf(b)).toBe(0n);

    // The same signed transactions again: refused, nothing sent.
    const nonceAfter = await anvil.publicClient.getTransactionCount({ address: fundingAccount.address });
    const replay = await broadcastPlan(res.body.id, signed);
    expect(replay.status).toBe(409);
    expect(replay.body.error.message).toMatch(/broadcast already/);
    expect(await anvil.publicClient.getTransactionCount({ address: fundingAccount.address })).toBe(nonceAfter);
    expect((await broadcastPlan('swp_nope', signed)).status).toBe(404);
  }, 60_000);

  it('refuses an expired plan, and what is no signed transaction, sending nothing', async () => {
    const a = await newPaidLink(usdt18(2n));
    const res = await plan({ rail: 'USDT_BSC', destination, fundingAddress: fundingAccount.address });
    expect(res.status).toBe(201);
    const signed = signOffline(res.body);
    const nonce = await anvil.publicClient.getTransactionCount({ address: fundingAccount.address });
    const garbage = await broadcastPlan(res.body.id, { transactions: signed.transactions.map(() => ({ raw: '0xzz' })) });
    expect(garbage.status).toBe(409);
    expect(garbage.body.error.message).toMatch(/not a signed transaction/);
    await stack.pool.query(sql.unsafe`UPDATE sweep_plans SET expires_at = now() - interval '1 second' WHERE id = ${res.body.id}`);
    const expired = await broadcastPlan(res.body.id, signed);
    expect(expired.status).toBe(409);
    expect(expired.body.error.message).toMatch(/expired/);
    expect(await anvil.publicClient.getTransactionCount({ address: fundingAccount.address })).toBe(nonce);
    expect(await usdt.balanceOf(a)).toBe(usdt18(2n));
  }, 60_000);
});
