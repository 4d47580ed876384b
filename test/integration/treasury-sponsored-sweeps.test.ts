import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeFunctionData, encodeFunctionData, parseEther, parseTransaction, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { entryPointAbi, sweepCallData, toAbiOp, userOpHash, type PlannedUserOp } from '../../rails/evm/user-op.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { addSweepDestination } from '../../services/treasury/destinations.js';
import { deployAccountAbstraction } from '../helpers/account-abstraction.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { dashboardUser } from '../helpers/dashboard-users.js';
import { connectAllRails, evmXpub, tronXpub } from '../helpers/fixtures.js';
import { deployMulticall3 } from '../helpers/multicall.js';
import { eventually } from '../helpers/wait.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Sponsored (EIP-7702) sweep plans on anvil with the Prague rules (docs/treasury.md, "Sponsored
 * plans"), with eth-infinitism's EntryPoint v0.8 and Simple7702Account from their npm package:
 * every source signs an authorization and a user operation offline, the funding address sends one
 * transaction, and the destination holds exactly the total while no source holds a token or
 * received any native coin. An op altered to another recipient (even signed by its own source)
 * and a replay are refused and send nothing.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const fundingAccount = mnemonicToAccount(mnemonic, { path: "m/44'/60'/0'/0/0" });
const funding = fundingAccount.address.toLowerCase() as Address;

let anvil: Anvil;
let usdt: TestToken;
let stack: Stack;
let store: CreatedStore;
let key: string;
let delegate: Address;
let destination: Address;

const usdt18 = (n: bigint) => n * 10n ** 18n;
const plan = (payload: Record<string, string>) => stack.request({ method: 'POST', url: '/v1/sweeps', key, payload });
const broadcastPlan = (id: string, payload: unknown) => stack.request({ method: 'POST', url: `/v1/sweeps/${id}/broadcast`, key, payload });
const sponsored = (rail = 'USDT_BSC') => plan({ rail, destination, fundingAddress: funding, kind: 'sponsored' });

async function newPaidLink(amount: bigint): Promise<Address> {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'] } });
  expect(res.status).toBe(201);
  await usdt.mint(res.body.bscAddress, amount);
  return (res.body.bscAddress as string).toLowerCase() as Address;
}

const dir = mkdtempSync(join(tmpdir(), 'sponsored-'));
const mnemonicFile = join(dir, 'mnemonic.txt');
writeFileSync(mnemonicFile, mnemonic);

/** Runs the offline signer as the merchant would, every socket forbidden; answers its output. */
function signOffline(answer: unknown): { transactions: { raw: Hex; kind: string }[] } {
  const planFile = join(dir, `plan-${Date.now()}.json`);
  const out = `${planFile}.signed`;
  writeFileSync(planFile, JSON.stringify(answer));
  const r = spawnSync(process.execPath, ['--import', './test/helpers/no-network.mjs', 'bin/sweep-sign.mjs', planFile, '--mnemonic-file', mnemonicFile, '--out', out], { encoding: 'utf8' });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(r.stdout).toMatch(/sponsored: \d+ EIP-7702 transaction\(s\) from/);
  return JSON.parse(readFileSync(out, 'utf8'));
}

/**
 * The signer's transaction with user operation `index` changed by `change` and signed again by its
 * own source, the whole transaction re-signed by the funding key: every signature is good.
 */
async function reSigned(raw: Hex, body: any, index: number, change: (op: PlannedUserOp) => PlannedUserOp): Promise<Hex> {
  const tx = parseTransaction(raw);
  const call = decodeFunctionData({ abi: entryPointAbi, data: tx.data! });
  const [ops, beneficiary] = call.args as unknown as [Array<ReturnType<typeof toAbiOp>>, Address];
  const p = body.plan;
  const op = change(p.userOps[index]);
  const source = mnemonicToAccount(mnemonic, { path: p.sources[index].path });
  const signature = await source.sign({ hash: userOpHash(op, p.delegate, p.entryPoint, p.chainId) });
  const altered = ops.map((o, i) => (i === index ? toAbiOp(op, signature) : o));
  return fundingSigned(raw, { data: encodeFunctionData({ abi: entryPointAbi, functionName: 'handleOps', args: [altered, beneficiary] }) });
}

/** The signer's type-4 transaction with `change` applied, signed again by the funding key. */
function fundingSigned(raw: Hex, change: { data?: Hex; authorizationList?: NonNullable<ReturnType<typeof parseTransaction>['authorizationList']> }): Promise<Hex> {
  const tx = parseTransaction(raw);
  return fundingAccount.signTransaction({
    type: 'eip7702', chainId: tx.chainId!, nonce: tx.nonce!, gas: tx.gas!, maxFeePerGas: tx.maxFeePerGas!, maxPriorityFeePerGas: tx.maxPriorityFeePerGas!,
    to: tx.to!, value: 0n, authorizationList: change.authorizationList ?? tx.authorizationList!, data: change.data ?? tx.data!,
  });
}

const gasPerAddress: string[] = [];

beforeAll(async () => {
  anvil = await startAnvil({ hardfork: 'prague' });
  usdt = await deployTestToken(anvil, { decimals: 18 });
  await deployMulticall3(anvil);
  ({ delegate } = await deployAccountAbstraction(anvil));
  destination = anvil.accounts[5]!;
  stack = await startStack({
    USDT_CONTRACT_USDT_BSC_TEST: usdt.address, RPC_URL_USDT_BSC_TEST: anvil.url, SWEEP_DELEGATE_USDT_BSC_TEST: delegate, CONFIRMATIONS_USDT_BSC: '3',
    // The same chain as two more rails: one with sponsored plans turned off, one naming a delegate with no code.
    USDT_CONTRACT_USDT_ETH_TEST: usdt.address, RPC_URL_USDT_ETH_TEST: anvil.url, SWEEP_DELEGATE_USDT_ETH_TEST: 'none',
    USDT_CONTRACT_USDT_POLYGON_TEST: usdt.address, RPC_URL_USDT_POLYGON_TEST: anvil.url, SWEEP_DELEGATE_USDT_POLYGON_TEST: anvil.accounts[9]!,
    TREASURY_DESTINATION_DELAY_SECONDS: '0',
  });
  store = await stack.createStore('Sponsored sweeping shop');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
  const owner = await dashboardUser(stack, store, 'owner');
  for (const rail of ['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON']) {
    await addSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, owner.userId, { rail, address: destination, label: 'cold' });
  }
  await anvil.rpc('anvil_setBalance', [funding, `0x${parseEther('10').toString(16)}`]);
}, 120_000);

afterAll(async () => {
  console.log(`sponsored sweep gas: ${gasPerAddress.join('; ')}`);
  await stack?.stop();
  await anvil?.stop();
});

describe('POST /v1/sweeps {kind: "sponsored"}', () => {
  it('is refused with the kind named where the rail has no delegate, or its delegate has no code', async () => {
    await newPaidLink(usdt18(1n));
    for (const [rail, message] of [['USDT_ETH', /no EIP-7702 delegate is configured/], ['USDT_POLYGON', /has no code on this chain/]] as const) {
      const res = await sponsored(rail);
      expect({ rail, status: res.status, code: res.body.error?.code, param: res.body.error?.param }).toEqual({ rail, status: 400, code: 'invalid_field', param: 'kind' });
      expect(res.body.error.message).toMatch(message);
    }
    const bad = await plan({ rail: 'USDT_BSC', destination, fundingAddress: funding, kind: 'gasless' });
    expect({ status: bad.status, param: bad.body.error?.param }).toEqual({ status: 400, param: 'kind' });
  });

  it('moves every source to the destination in one transaction from the funding address: no top-ups, no dust', async () => {
    for (const a of [usdt18(5n), usdt18(7n), 2_500_000_000_000_000_001n]) await newPaidLink(a);
    const sources = (await stack.request({ method: 'GET', url: '/v1/treasury/balances?rail=USDT_BSC&limit=500', key })).body.data[0].addresses
      .filter((a: { tokenBalance: string }) => a.tokenBalance !== '0').map((a: { address: Address }) => a.address);
    expect(sources.length).toBeGreaterThanOrEqual(4);
    const total = (await Promise.all(sources.map((a: Address) => usdt.balanceOf(a)))).reduce((s: bigint, b: bigint) => s + b, 0n);
    const destinationBefore = await usdt.balanceOf(destination);

    const res = await sponsored();
    expect(res.status).toBe(201);
    const again = await sponsored();
    expect(again.body.plan).toEqual(res.body.plan);
    const p = res.body.plan;
    expect(res.body.kind).toBe('sponsored');
    expect(res.body.cost.topUps).toBe('0');
    expect(p).toMatchObject({ kind: 'sponsored', delegate: delegate.toLowerCase(), entryPoint: '0x4337084d9e255ff0702461cf8895ce9e3b5ff108', funding });
    expect(p.transactions).toHaveLength(1);
    expect(p.transactions[0]).toMatchObject({ kind: 'sponsored', from: funding, to: p.entryPoint, type: 'eip7702', value: '0' });
    expect(p.sources.map((s: { address: string }) => s.address)).toEqual(sources);
    expect(p.authorizations.map((a: { source: string; nonce: number }) => [a.source, a.nonce])).toEqual(sources.map((s: string) => [s, 0]));
    expect(p.userOps.every((o: PlannedUserOp) => o.gasFees === `0x${'0'.repeat(64)}` && o.initCode === '0x7702')).toBe(true);
    expect(p.userOps[1].callData).toBe(sweepCallData(usdt.address, destination.toLowerCase() as Address, BigInt(p.sources[1].amountMinor)));

    const signed = signOffline(res.body);
    expect(signed.transactions.map((t) => t.kind)).toEqual(['sponsored']);
    const fundingBefore = { nonce: await anvil.publicClient.getTransactionCount({ address: funding }), wei: await anvil.publicClient.getBalance({ address: funding }) };
    const untouched = async () => {
      expect(await anvil.publicClient.getTransactionCount({ address: funding })).toBe(fundingBefore.nonce);
      expect(await usdt.balanceOf(sources[1])).toBe(BigInt(p.sources[1].amountMinor));
    };

    // Op 1 paying another recipient, signed by its own source and the whole transaction by the funding key: refused.
    const thief = anvil.accounts[7]!;
    const altered = await reSigned(signed.transactions[0]!.raw, res.body, 1, (op) => ({ ...op, callData: sweepCallData(usdt.address, thief, BigInt(p.sources[1].amountMinor)) }));
    const refused = await broadcastPlan(res.body.id, { transactions: [{ raw: altered }] });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/user operation 1's call \(its token, recipient or amount\)/);
    // A source's authorization dropped: refused.
    const foreign = structuredClone(signed);
    foreign.transactions[0]!.raw = await fundingSigned(signed.transactions[0]!.raw, { authorizationList: parseTransaction(signed.transactions[0]!.raw).authorizationList!.slice(1) });
    expect((await broadcastPlan(res.body.id, foreign)).body.error.message).toMatch(/number of authorizations/);
    await untouched();

    const sent = await broadcastPlan(res.body.id, signed);
    expect(sent.status).toBe(200);
    expect(sent.body.transactions.map((x: { kind: string; status: string }) => `${x.kind}:${x.status}`)).toEqual(['sponsored:success']);
    expect(await usdt.balanceOf(destination)).toBe(destinationBefore + total);
    for (const s of sources) {
      expect(await usdt.balanceOf(s)).toBe(0n);
      expect(await anvil.publicClient.getBalance({ address: s })).toBe(0n);
    }
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: sent.body.transactions[0].hash });
    expect(receipt.gasUsed).toBeLessThanOrEqual(BigInt(p.transactions[0].gas));
    expect(await anvil.publicClient.getBalance({ address: funding })).toBe(fundingBefore.wei - receipt.gasUsed * receipt.effectiveGasPrice);
    gasPerAddress.push(`${sources.length} sources, ${receipt.gasUsed} gas in all (limit ${p.transactions[0].gas}), ${receipt.gasUsed / BigInt(sources.length)} per address`);

    // The ledger: one transfer per source, all with the one hash.
    const ledger = await stack.request({ method: 'GET', url: `/v1/sweeps/${res.body.id}`, key });
    expect(ledger.body).toMatchObject({ kind: 'sponsored', state: expect.stringMatching(/^(mined|final)$/) });
    expect(ledger.body.transactions.map((t: { kind: string; source: string; to: string; hash: string }) => [t.kind, t.source, t.to, t.hash]))
      .toEqual(sources.map((s: string) => ['transfer', s, destination.toLowerCase(), sent.body.transactions[0].hash]));
    // Followed to the end like any sweep: past the confirmation depth every source's row is final, and so is the sweep.
    await anvil.rpc('anvil_mine', ['0x3']);
    const final = await eventually(async () => {
      const x = await stack.request({ method: 'GET', url: `/v1/sweeps/${res.body.id}`, key });
      return x.body.state === 'final' ? x.body : undefined;
    }, 'the sponsored sweep to be final', 30_000);
    expect(final.transactions.map((t: { state: string }) => t.state)).toEqual(sources.map(() => 'final'));

    // The same signed transaction again: refused, nothing sent.
    const nonceAfter = await anvil.publicClient.getTransactionCount({ address: funding });
    const replay = await broadcastPlan(res.body.id, signed);
    expect(replay.status).toBe(409);
    expect(replay.body.error.message).toMatch(/broadcast already/);
    expect(await anvil.publicClient.getTransactionCount({ address: funding })).toBe(nonceAfter);
  }, 120_000);

  it('carries 50 sources a transaction: 52 sources are two transactions with consecutive funding nonces', async () => {
    const paid: Address[] = [];
    for (let i = 0; i < 52; i++) paid.push(await newPaidLink(usdt18(BigInt(i + 1))));
    const total = usdt18(BigInt((52 * 53) / 2));
    const before = await usdt.balanceOf(destination);
    const res = await sponsored();
    expect(res.status).toBe(201);
    const txs = res.body.plan.transactions;
    const nonce = await anvil.publicClient.getTransactionCount({ address: funding });
    expect(txs.map((t: { firstSource: number; sourceCount: number; nonce: number }) => [t.firstSource, t.sourceCount, t.nonce])).toEqual([[0, 50, nonce], [50, 2, nonce + 1]]);
    const signed = signOffline(res.body);
    // The two signed transactions swapped: refused, nothing sent.
    const swapped = await broadcastPlan(res.body.id, { transactions: [...signed.transactions].reverse() });
    expect(swapped.status).toBe(409);
    expect(await anvil.publicClient.getTransactionCount({ address: funding })).toBe(nonce);
    const sent = await broadcastPlan(res.body.id, signed);
    expect(sent.status).toBe(200);
    expect(sent.body.transactions.map((x: { status: string }) => x.status)).toEqual(['success', 'success']);
    expect(await usdt.balanceOf(destination)).toBe(before + total);
    for (const a of paid) expect(await usdt.balanceOf(a)).toBe(0n);
    const receipts = await Promise.all(sent.body.transactions.map((t: { hash: Hex }) => anvil.publicClient.getTransactionReceipt({ hash: t.hash })));
    gasPerAddress.push(`50 fresh sources in one transaction, ${receipts[0]!.gasUsed} gas (limit ${txs[0].gas}), ${receipts[0]!.gasUsed / 50n} per address`);
    const ledger = await stack.request({ method: 'GET', url: `/v1/sweeps/${res.body.id}`, key });
    expect(ledger.body.transactions).toHaveLength(52);
    expect(new Set(ledger.body.transactions.map((t: { hash: string }) => t.hash)).size).toBe(2);
  }, 300_000);

  it('sweeps addresses already delegated by an earlier sweep: the nonces move on', async () => {
    const sources = (await stack.request({ method: 'GET', url: '/v1/treasury/balances?rail=USDT_BSC&limit=500', key })).body.data[0].addresses.map((a: { address: Address }) => a.address);
    const [first, second] = [sources[0] as Address, sources[1] as Address];
    await usdt.mint(first, usdt18(3n));
    await usdt.mint(second, usdt18(4n));
    const before = await usdt.balanceOf(destination);
    const res = await sponsored();
    expect(res.status).toBe(201);
    expect(res.body.plan.authorizations.map((a: { nonce: number }) => a.nonce)).toEqual([1, 1]);
    expect(res.body.plan.userOps.map((o: PlannedUserOp) => o.nonce)).toEqual(['1', '1']);
    const sent = await broadcastPlan(res.body.id, signOffline(res.body));
    expect(sent.status).toBe(200);
    expect(await usdt.balanceOf(destination)).toBe(before + usdt18(7n));
    expect([await usdt.balanceOf(first), await usdt.balanceOf(second)]).toEqual([0n, 0n]);
    const receipt = await anvil.publicClient.getTransactionReceipt({ hash: sent.body.transactions[0].hash });
    gasPerAddress.push(`2 sources already delegated, ${receipt.gasUsed} gas in all, ${receipt.gasUsed / 2n} per address`);
  }, 120_000);
});
