import { encodeFunctionData, size, type Address, type Hex } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { SweepKindUnavailable, SweepPlanRefused } from '../payment-method.js';
import { railEndpoint, type RailSettings } from '../settings.js';
import type { balanceClient } from './balances.js';
import { rpcBatch } from './rpc-batch.js';
import { estimateTransferGas, feeCaps, nonces, readSweepState, type SweepPlanInput } from './sweep-plan.js';
import { eip7702InitCode, entryPointAbi, packUint128s, simple7702AccountAbi, sweepCallData, toAbiOp, type PlannedUserOp } from './user-op.js';

/**
 * A sponsored EVM sweep plan (docs/treasury.md, "Sponsored plans"): no top-ups and no dust. Each
 * source signs an EIP-7702 authorization delegating it to eth-infinitism's `Simple7702Account`
 * and one ERC-4337 v0.8 user operation whose only call is `transfer(destination, its whole
 * balance)` on the token, with zero fees, so it needs no native coin. The funding address then
 * sends one type-4 transaction per 50 sources to EntryPoint v0.8, `handleOps(their ops, funding)`,
 * carrying their authorizations, and pays all the gas. Read at one block, so the same chain state gives the same plan.
 */
export interface EvmSponsoredTx {
  kind: 'sponsored';
  from: string;
  /** EntryPoint v0.8. */
  to: string;
  value: '0';
  nonce: number;
  gas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  chainId: number;
  type: 'eip7702';
  /** The sources (and their authorizations and ops, same indexes) this transaction carries: `sourceCount` from `firstSource`. */
  firstSource: number;
  sourceCount: number;
}

export interface EvmSponsoredPlan {
  kind: 'sponsored';
  chainId: number;
  blockNumber: string;
  token: string;
  destination: string;
  funding: string;
  /** The EIP-7702 delegate (Simple7702Account) and the EntryPoint it trusts, as read from it. */
  delegate: string;
  entryPoint: string;
  sources: Array<{ address: string; path: string | null; amountMinor: string }>;
  /** Per source, in order: the EIP-7702 authorization it signs (its account nonce). */
  authorizations: Array<{ source: string; chainId: number; address: string; nonce: number }>;
  /** Per source, in order: the user operation it signs (the signature over EntryPoint's userOpHash). */
  userOps: PlannedUserOp[];
  /**
   * What the funding key signs, `sponsoredOpsPerTransaction` sources each (consecutive funding
   * nonces): each one's data is `handleOps(its userOps with their signatures, funding)`.
   */
  transactions: EvmSponsoredTx[];
  topUpWei: '0';
  maxFeeWei: string;
  fundingBalanceWei: string;
}

/**
 * Sources per transaction: the gas limit comes to about 210,000 a source (10.6 M for 50 measured),
 * well inside the 30 M and more a block of Ethereum, BSC or Polygon holds; it uses about a third.
 */
export const sponsoredOpsPerTransaction = 50;
/** Gas an op's validation may use: `validateUserOp` with one ECDSA recovery and EntryPoint's nonce check. */
export const verificationGasLimit = 80_000n;
/** EIP-7702's intrinsic gas per authorization (PER_EMPTY_ACCOUNT_COST). */
const authorizationGas = 25_000n;
/** EntryPoint's own work per op around the account's calls (context, events, accounting). */
const entryPointGasPerOp = 30_000n;
/** EIP-7623's floor price per calldata byte (a non-zero byte is four tokens of 10): a bound for every byte. */
const calldataGasPerByte = 40n;

/** The configured delegate, with code on the chain, and the EntryPoint it names (with code too). */
async function delegateOnChain(delegate: Address, client: ReturnType<typeof balanceClient>, blockNumber: bigint) {
  const hasCode = async (address: Address) => ((await client.getCode({ address, blockNumber })) ?? '0x') !== '0x';
  if (!(await hasCode(delegate))) throw new SweepKindUnavailable(`The EIP-7702 delegate ${delegate} has no code on this chain: no sponsored plans here.`);
  const entryPoint = (await client.readContract({ address: delegate, abi: simple7702AccountAbi, functionName: 'entryPoint', blockNumber })).toLowerCase() as Address;
  if (!(await hasCode(entryPoint))) throw new SweepKindUnavailable(`The EntryPoint ${entryPoint} the delegate trusts has no code on this chain: no sponsored plans here.`);
  return { delegate, entryPoint };
}

/** The transaction's gas limit: the base, each byte of calldata at the floor price, and per op its authorization, both gas limits and EntryPoint's part. */
function bundleGas(ops: readonly PlannedUserOp[], funding: Address, callGasLimit: bigint): bigint {
  const dummySignature = `0x${'11'.repeat(65)}` as Hex;
  const data = encodeFunctionData({ abi: entryPointAbi, functionName: 'handleOps', args: [ops.map((op) => toAbiOp(op, dummySignature)), funding] });
  const perOp = authorizationGas + verificationGasLimit + callGasLimit + entryPointGasPerOp;
  return 21_000n + calldataGasPerByte * BigInt(size(data)) + BigInt(ops.length) * perOp;
}

export async function planSponsoredSweep(rails: RailSettings, rail: UsdtRail, environment: Environment, input: SweepPlanInput): Promise<EvmSponsoredPlan> {
  const configured = railEndpoint(rails, rail, environment).sweepDelegate?.toLowerCase() as Address | undefined;
  if (!configured) throw new SweepKindUnavailable(`${rail} offers no sponsored sweep plans in the ${environment} environment (no EIP-7702 delegate is configured).`);
  const { token, url, client, chainId, funding, blockNumber, block, sources, fundingBalance } = await readSweepState(rails, rail, environment, input);
  // An authorization by the transaction's own sender would need its nonce plus one; a funding address that is a source is refused instead.
  if (sources.some((s) => s.address === funding)) throw new SweepPlanRefused('The funding address holds tokens to sweep itself: name another funding address.');
  const { delegate, entryPoint } = await delegateOnChain(configured, client, blockNumber);
  const destination = input.destination.toLowerCase() as Address;
  const { maxFee, priority } = await feeCaps(client, blockNumber);
  const estimate = await estimateTransferGas(client, token, sources[0]!.address, destination, sources[0]!.amount, block);
  const callGasLimit = (estimate * 125n) / 100n;
  const [fundingNonce, ...accountNonces] = await nonces(url, [funding, ...sources.map((s) => s.address)], block);
  const opNonces = await rpcBatch(url, sources.map((s) => ({
    method: 'eth_call',
    params: [{ to: entryPoint, data: encodeFunctionData({ abi: entryPointAbi, functionName: 'getNonce', args: [s.address, 0n] }) }, block],
  })));
  const userOps: PlannedUserOp[] = sources.map((s, i) => ({
    sender: s.address, nonce: BigInt(opNonces[i]!).toString(), initCode: eip7702InitCode, callData: sweepCallData(token, destination, s.amount),
    accountGasLimits: packUint128s(verificationGasLimit, callGasLimit), preVerificationGas: '0', gasFees: packUint128s(0n, 0n), paymasterAndData: '0x',
  }));
  const fee = { maxFeePerGas: maxFee.toString(), maxPriorityFeePerGas: priority.toString(), chainId, type: 'eip7702' as const };
  const transactions: EvmSponsoredTx[] = [];
  for (let first = 0; first < userOps.length; first += sponsoredOpsPerTransaction) {
    const ops = userOps.slice(first, first + sponsoredOpsPerTransaction);
    const gas = bundleGas(ops, funding, callGasLimit).toString();
    transactions.push({ kind: 'sponsored', from: funding, to: entryPoint, value: '0', nonce: fundingNonce! + transactions.length, gas, ...fee, firstSource: first, sourceCount: ops.length });
  }
  const maxFeeWei = transactions.reduce((sum, t) => sum + BigInt(t.gas) * maxFee, 0n);
  if (fundingBalance < maxFeeWei) throw new SweepPlanRefused(`The funding address holds ${fundingBalance} wei; the sponsored transactions may cost ${maxFeeWei} wei.`);
  return {
    kind: 'sponsored', chainId, blockNumber: blockNumber.toString(), token: token.toLowerCase(), destination, funding, delegate, entryPoint,
    sources: sources.map((s) => ({ address: s.address, path: s.path, amountMinor: s.amount.toString() })),
    authorizations: sources.map((s, i) => ({ source: s.address, chainId, address: delegate, nonce: accountNonces[i]! })),
    userOps,
    transactions,
    topUpWei: '0', maxFeeWei: maxFeeWei.toString(), fundingBalanceWei: fundingBalance.toString(),
  };
}
