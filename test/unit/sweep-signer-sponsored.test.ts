import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeFunctionData, parseTransaction, recoverAddress, recoverTransactionAddress, type Address, type Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { recoverAuthorizationAddress } from 'viem/utils';
import { eip7702InitCode, entryPointAbi, packUint128s, sweepCallData, userOpHash, type PlannedUserOp } from '../../rails/evm/user-op.js';

/**
 * The offline signer on a sponsored (EIP-7702) plan (bin/sweep-sign-sponsored.mjs,
 * docs/treasury.md): with no network, it signs each source's authorization of the plan's delegate
 * and its user operation (recovering to the source over EntryPoint v0.8's hash), and the funding
 * key's handleOps transaction; it refuses the whole plan, writing nothing, when an op pays another
 * recipient or another amount, would charge the source fees, or an authorization names another
 * delegate or chain.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const dir = mkdtempSync(join(tmpdir(), 'sweep-sign-7702-'));
const mnemonicFile = join(dir, 'mnemonic.txt');
writeFileSync(mnemonicFile, `${mnemonic}\n`);

const chainId = 56;
const token = '0x55d398326f99059ff775485246999027b3197955' as Address;
const destination = '0x52908400098527886e0f7030069857d2e4169ee7' as Address;
const delegate = '0xe6cae83bde06e4c305530e199d7217f42808555b' as Address;
const entryPoint = '0x4337084d9e255ff0702461cf8895ce9e3b5ff108' as Address;
const funding = mnemonicToAccount(mnemonic, { path: "m/44'/60'/0'/0/0" }).address.toLowerCase();
const sources = [
  { path: "m/44'/60'/0'/1/0", amountMinor: '10000000000000000000' },
  { path: "m/44'/60'/0'/1/1", amountMinor: '2500000000000000001' },
].map((s) => ({ ...s, address: mnemonicToAccount(mnemonic, { path: s.path as `m/44'/60'/${string}` }).address.toLowerCase() }));

function planWith(change: (p: any) => void = () => undefined) {
  const userOps: PlannedUserOp[] = sources.map((s, i) => ({
    sender: s.address, nonce: String(i), initCode: eip7702InitCode, callData: sweepCallData(token, destination, BigInt(s.amountMinor)),
    accountGasLimits: packUint128s(80_000n, 60_000n), preVerificationGas: '0', gasFees: packUint128s(0n, 0n), paymasterAndData: '0x',
  }));
  const answer: any = {
    id: 'swp_7702', kind: 'sponsored', totalToken: '12.500000000000000001', tokenSymbol: 'USDT',
    plan: {
      kind: 'sponsored', chainId, blockNumber: '100', token, destination, funding, delegate, entryPoint, sources,
      authorizations: sources.map((s) => ({ source: s.address, chainId, address: delegate, nonce: 3 })),
      userOps,
      transactions: [{ kind: 'sponsored', from: funding, to: entryPoint, value: '0', nonce: 9, gas: '500000', maxFeePerGas: '3000000000', maxPriorityFeePerGas: '1000000000', chainId, type: 'eip7702', firstSource: 0, sourceCount: 2 }],
      topUpWei: '0', maxFeeWei: '1500000000000000', fundingBalanceWei: '1',
    },
  };
  change(answer);
  return answer;
}

let runs = 0;
function sign(answer: unknown) {
  const planFile = join(dir, `plan-${++runs}.json`);
  const out = join(dir, `signed-${runs}.json`);
  writeFileSync(planFile, JSON.stringify(answer));
  const r = spawnSync(process.execPath, ['--import', './test/helpers/no-network.mjs', 'bin/sweep-sign.mjs', planFile, '--mnemonic-file', mnemonicFile, '--out', out], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, out };
}

describe('sweep:sign on a sponsored plan', () => {
  it('signs each authorization and user operation with its source, and the handleOps transaction with the funding key', async () => {
    const answer = planWith();
    const r = sign(answer);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toContain('sponsored: 1 EIP-7702 transaction(s)');
    expect(r.stdout).toContain('top-ups      0 from');
    const [signed] = JSON.parse(readFileSync(r.out, 'utf8')).transactions;
    const tx = parseTransaction(signed.raw as Hex);
    expect((await recoverTransactionAddress({ serializedTransaction: signed.raw })).toLowerCase()).toBe(funding);
    expect({ type: tx.type, to: tx.to?.toLowerCase(), nonce: tx.nonce, chainId: tx.chainId, gas: tx.gas }).toEqual({ type: 'eip7702', to: entryPoint, nonce: 9, chainId, gas: 500_000n });
    for (const [i, auth] of tx.authorizationList!.entries()) {
      expect({ address: auth.address.toLowerCase(), chainId: auth.chainId, nonce: auth.nonce }).toEqual({ address: delegate, chainId, nonce: 3 });
      expect((await recoverAuthorizationAddress({ authorization: auth })).toLowerCase()).toBe(sources[i]!.address);
    }
    const { args } = decodeFunctionData({ abi: entryPointAbi, data: tx.data! });
    const [ops, beneficiary] = args as unknown as [Array<{ sender: string; callData: Hex; signature: Hex }>, string];
    expect(beneficiary.toLowerCase()).toBe(funding);
    for (const [i, op] of ops.entries()) {
      const planned = answer.plan.userOps[i] as PlannedUserOp;
      expect(op.callData).toBe(planned.callData);
      expect((await recoverAddress({ hash: userOpHash(planned, delegate, entryPoint, chainId), signature: op.signature })).toLowerCase()).toBe(sources[i]!.address);
    }
  });

  it('refuses the whole plan, writing nothing, when anything differs', () => {
    const cases: [string, (a: any) => void, RegExp][] = [
      ['an op paying another recipient', (a) => { a.plan.userOps[1].callData = sweepCallData(token, '0x000000000000000000000000000000000000dead', BigInt(sources[1]!.amountMinor)); }, /not the destination/],
      ['an op moving another amount', (a) => { a.plan.userOps[0].callData = sweepCallData(token, destination, 1n); }, /not the planned/],
      ['an op calling another token', (a) => { a.plan.userOps[0].callData = sweepCallData('0x000000000000000000000000000000000000beef', destination, BigInt(sources[0]!.amountMinor)); }, /not the plan's token/],
      ['an op charging the source fees', (a) => { a.plan.userOps[0].gasFees = packUint128s(1n, 1n); }, /pay fees from the source/],
      ['an authorization of another delegate', (a) => { a.plan.authorizations[1].address = '0x000000000000000000000000000000000000beef'; }, /not for the plan's delegate/],
      ['an authorization on another chain', (a) => { a.plan.authorizations[0].chainId = 1; }, /not for the plan's delegate/],
      ['a transaction to another contract', (a) => { a.plan.transactions[0].to = '0x000000000000000000000000000000000000beef'; }, /only from the funding address to the EntryPoint/],
      ['a source left out of the transactions', (a) => { a.plan.transactions[0].sourceCount = 1; }, /do not carry every source/],
      ['a path that derives another address', (a) => { a.plan.sources[0].path = "m/44'/60'/0'/1/5"; }, /derives/],
    ];
    for (const [what, change, message] of cases) {
      const r = sign(planWith(change));
      expect({ what, status: r.status }).toEqual({ what, status: 1 });
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('NETWORK');
      expect(existsSync(r.out)).toBe(false);
    }
  });
});
