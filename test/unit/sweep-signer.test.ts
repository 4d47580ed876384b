import { describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils } from 'tronweb';
import { encodeFunctionData, erc20Abi, parseTransaction, recoverAddress, recoverTransactionAddress, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { tronAddress, tronAddressFromBytes, tronAddressToEvmHex } from '../../rails/tron/address.js';
import { unsignedTronTx, type TronContract } from '../../rails/tron/transaction.js';

/**
 * The offline sweep signer (bin/sweep-sign.mjs, docs/treasury.md): run as the merchant would, with
 * every socket, DNS lookup and fetch made fatal, it signs a plan whose paths derive its sources and
 * refuses the whole plan (writing nothing) when a path, a recipient or an amount differs. The
 * service never imports it.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const dir = mkdtempSync(join(tmpdir(), 'sweep-sign-'));
const noNetwork = './test/helpers/no-network.mjs';
const mnemonicFile = join(dir, 'mnemonic.txt');
writeFileSync(mnemonicFile, `${mnemonic}\n`);

const token = '0x55d398326f99059ff775485246999027b3197955';
const destination = '0x52908400098527886e0f7030069857d2e4169ee7';
const funding = mnemonicToAccount(mnemonic, { path: "m/44'/60'/0'/0/0" });
const sources = [
  { path: "m/44'/60'/0'/1/0", amountMinor: '10000000000000000000' },
  { path: "m/44'/60'/0'/0/3", amountMinor: '2500000000000000001' },
].map((s) => ({ ...s, address: mnemonicToAccount(mnemonic, { path: s.path as `m/44'/60'/${string}` }).address.toLowerCase() }));
const fee = { gas: '65000', maxFeePerGas: '3000000000', maxPriorityFeePerGas: '1000000000', chainId: 56, type: 'eip1559' };
const transferData = (to: string, amount: string) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as Address, BigInt(amount)] });

function planWith(change: (p: any) => void = () => undefined) {
  const answer: any = {
    id: 'swp_test', totalToken: '12.500000000000000001', tokenSymbol: 'USDT',
    plan: {
      chainId: 56, blockNumber: '100', token, destination, funding: funding.address.toLowerCase(), sources,
      transactions: [
        { kind: 'top_up', from: funding.address.toLowerCase(), to: sources[1]!.address, value: '195000000000000', data: '0x', nonce: 7, ...fee, gas: '21000' },
        ...sources.map((s) => ({ kind: 'transfer', from: s.address, to: token, value: '0', data: transferData(destination, s.amountMinor), nonce: 0, ...fee })),
      ],
      topUpWei: '195000000000000', maxFeeWei: '0', fundingBalanceWei: '1',
    },
  };
  const copy = structuredClone(answer);
  change(copy);
  return copy;
}

let runs = 0;
/**
 * Runs the signer on `answer` as the merchant would, each run on its own plan and output files, so
 * a test's refusal cases run side by side: each is a whole Node process, mostly spent loading viem.
 */
function sign(answer: unknown, extra: string[] = []): Promise<{ status: number | null; stdout: string; stderr: string; out: string }> {
  const planFile = join(dir, `plan-${++runs}.json`);
  const out = join(dir, `signed-${runs}.json`);
  writeFileSync(planFile, JSON.stringify(answer));
  const child = spawn(process.execPath, ['--import', noNetwork, 'bin/sweep-sign.mjs', planFile, '--mnemonic-file', mnemonicFile, '--out', out, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => void (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => void (stderr += d));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr, out }));
  });
}

describe('sweep:sign (offline signer)', () => {
  it('would be stopped by the no-network preload if it opened a socket (the guard works)', () => {
    const r = spawnSync(process.execPath, ['--import', noNetwork, '-e', "fetch('http://127.0.0.1:9').catch(() => {}); require('node:net').connect(9, '127.0.0.1')"], { encoding: 'utf8' });
    expect(r.status).toBe(97);
    expect(r.stderr).toContain('NETWORK');
  });

  it('signs every transaction of a plan whose paths derive its sources, with no network, and prints what it moves', async () => {
    const answer = planWith();
    const r = await sign(answer);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toContain(`destination  ${destination}`);
    expect(r.stdout).toContain('12.500000000000000001 USDT');
    const signed = JSON.parse(readFileSync(r.out, 'utf8'));
    expect(signed.planId).toBe('swp_test');
    expect(signed.transactions).toHaveLength(3);
    for (const [i, s] of signed.transactions.entries()) {
      const planned = answer.plan.transactions[i];
      const tx = parseTransaction(s.raw as Hex);
      expect((await recoverTransactionAddress({ serializedTransaction: s.raw })).toLowerCase()).toBe(planned.from);
      expect({ to: tx.to?.toLowerCase(), nonce: tx.nonce, chainId: tx.chainId, value: tx.value ?? 0n, data: tx.data ?? '0x', gas: tx.gas, maxFeePerGas: tx.maxFeePerGas })
        .toEqual({ to: planned.to, nonce: planned.nonce, chainId: 56, value: BigInt(planned.value), data: planned.data, gas: BigInt(planned.gas), maxFeePerGas: BigInt(planned.maxFeePerGas) });
    }
  });

  it('refuses the whole plan, writing nothing, when anything differs', async () => {
    const cases: [string, (p: any) => void, RegExp][] = [
      ['a path that derives another address', (a) => { a.plan.sources[0].path = "m/44'/60'/0'/1/1"; }, /derives/],
      ['a transfer to another recipient', (a) => { a.plan.transactions[1].data = transferData('0x000000000000000000000000000000000000dead', sources[0]!.amountMinor); }, /not the destination/],
      ['a transfer of another amount', (a) => { a.plan.transactions[2].data = transferData(destination, '1'); }, /not the planned/],
      ['a top-up to a stranger', (a) => { a.plan.transactions[0].to = '0x000000000000000000000000000000000000dead'; }, /only from the funding address/],
      ['a transfer of another token', (a) => { a.plan.transactions[1].to = '0x000000000000000000000000000000000000beef'; }, /not a transfer of the plan's token/],
      ['a transaction for another chain', (a) => { a.plan.transactions[2].chainId = 1; }, /chain 1/],
      ['another funding address', (a) => { a.plan.funding = '0x000000000000000000000000000000000000dead'; a.plan.transactions[0].from = a.plan.funding; }, /funding key/],
    ];
    const results = await Promise.all(cases.map(([, change]) => sign(planWith(change))));
    for (const [i, [what, , message]] of cases.entries()) {
      const r = results[i]!;
      expect({ what, status: r.status }).toEqual({ what, status: 1 });
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('NETWORK');
      expect(existsSync(r.out)).toBe(false);
    }
  });

  it('is never imported by the service', () => {
    const offenders: string[] = [];
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.(ts|mts|js|mjs)$/.test(name) && /sweep-sign/.test(readFileSync(p, 'utf8'))) offenders.push(p);
      }
    };
    for (const root of ['api', 'worker', 'services', 'activities', 'rails', 'runtime', 'workflows', 'db', 'domain', 'web']) walk(root);
    expect(offenders).toEqual([]);
  });
});

describe('sweep:sign (TRON plans)', () => {
  const tronOf = (path: string) => tronAddress(Buffer.from(mnemonicToAccount(mnemonic, { path: path as `m/44'/60'/${string}` }).publicKey.slice(4), 'hex'));
  const usdt = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
  const tronDestination = 'TEazPvZwDjDtFeJupyo7QunvnrnUjPH8ED';
  const tronFunding = tronOf("m/44'/195'/0'/0/0");
  const header = { refBlockNumber: 70_000_123n, refBlockId: `00000000042c1e7b${'ab'.repeat(24)}`, expirationMs: 1_764_400_000_000, timestampMs: 1_764_399_100_000 };
  const tronSources = [
    { path: "m/44'/195'/0'/1/0", amountMinor: '10000000' },
    { path: "m/44'/195'/0'/0/3", amountMinor: '2500001' },
  ].map((s) => ({ ...s, address: tronOf(s.path) }));
  const data = (to: string, amount: string) => `a9059cbb${tronAddressToEvmHex(to).slice(2).padStart(64, '0')}${BigInt(amount).toString(16).padStart(64, '0')}`;
  const tx = (kind: string, from: string, source: string, value: string, contract: TronContract, h = header) => ({ kind, from, source, value, ...unsignedTronTx(h, contract) });
  const delegate = (type: 'DelegateResourceContract' | 'UnDelegateResourceContract', receiver: string) =>
    tx(type === 'DelegateResourceContract' ? 'delegate' : 'undelegate', tronFunding, receiver, '7000000', { type, owner: tronFunding, receiver, balanceSun: 7_000_000n, resource: 'ENERGY' });
  const transfer = (s: (typeof tronSources)[number], to = tronDestination, amount = s.amountMinor) =>
    tx('transfer', s.address, s.address, amount, { type: 'TriggerSmartContract', owner: s.address, contract: usdt, data: data(to, amount) }, { ...header, feeLimitSun: 7_000_000n } as never);

  function tronPlan(change: (p: any) => void = () => undefined) {
    const answer: any = {
      id: 'swp_tron', totalToken: '12.500001', tokenSymbol: 'USDT',
      plan: {
        network: 'tron', kind: 'energy_delegation', token: usdt, destination: tronDestination, funding: tronFunding, expiresAtMs: header.expirationMs, trxBurnedSun: '1000000',
        sources: tronSources.map((s) => ({ address: s.address, path: s.path, amountMinor: s.amountMinor })),
        transactions: [
          tx('activate', tronFunding, tronSources[1]!.address, '1', { type: 'TransferContract', owner: tronFunding, to: tronSources[1]!.address, amountSun: 1n }),
          ...tronSources.map((s) => delegate('DelegateResourceContract', s.address)),
          ...tronSources.map((s) => transfer(s)),
          ...tronSources.map((s) => delegate('UnDelegateResourceContract', s.address)),
        ],
      },
    };
    change(answer);
    return answer;
  }

  it('signs each txID with its owner\'s key, offline, after decoding every transaction', async () => {
    const answer = tronPlan();
    const r = await sign(answer);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toContain(`destination  ${tronDestination}`);
    expect(r.stdout).toContain('12.500001 USDT');
    const signed = JSON.parse(readFileSync(r.out, 'utf8'));
    expect(signed.transactions).toHaveLength(answer.plan.transactions.length);
    for (const [i, s] of signed.transactions.entries()) {
      const planned = answer.plan.transactions[i];
      const out = JSON.parse(s.raw);
      expect({ txID: out.txID, raw: out.raw_data_hex }).toEqual({ txID: planned.txID, raw: planned.raw_data_hex });
      expect(utils.transaction.txCheck(out)).toBe(true);
      const signer = await recoverAddress({ hash: `0x${out.txID}`, signature: `0x${out.signature[0]}` });
      expect(tronAddressFromBytes(Buffer.from(signer.slice(2), 'hex'))).toBe(planned.from);
    }
  });

  it('refuses the whole TRON plan, writing nothing, when any transaction\'s bytes differ from a sweep', async () => {
    const stranger = 'TPX1jdAu3qdGCZCWX1m75RtB2wgtKotuDC';
    const cases: [string, (p: any) => void, RegExp][] = [
      ['a path that derives another address', (a) => { a.plan.sources[0].path = "m/44'/195'/0'/1/1"; }, /derives/],
      ['a transfer to another recipient', (a) => { a.plan.transactions[3] = transfer(tronSources[0]!, stranger); }, /does not pay the destination/],
      ['a transfer of another amount', (a) => { a.plan.transactions[4] = transfer(tronSources[1]!, tronDestination, '1'); }, /not the planned/],
      ['a JSON that says one thing and bytes another', (a) => { a.plan.transactions[3].raw_data_hex = transfer(tronSources[0]!, stranger).raw_data_hex; }, /not the SHA-256/],
      ['TRX to a stranger', (a) => { a.plan.transactions[0] = tx('activate', tronFunding, stranger, '1', { type: 'TransferContract', owner: tronFunding, to: stranger, amountSun: 1n }); }, /only from the funding account to a source/],
      ['energy never taken back', (a) => { a.plan.transactions.pop(); }, /not all taken back/],
      ['another funding account', (a) => { a.plan.funding = stranger; }, /funding key/],
    ];
    const results = await Promise.all(cases.map(([, change]) => sign(tronPlan(change))));
    for (const [i, [what, , message]] of cases.entries()) {
      const r = results[i]!;
      expect({ what, status: r.status }).toEqual({ what, status: 1 });
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('NETWORK');
      expect(existsSync(r.out)).toBe(false);
    }
  });
});
