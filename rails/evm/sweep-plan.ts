import { encodeFunctionData, erc20Abi, numberToHex, type Address, type Hex } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { SweepPlanRefused } from '../payment-method.js';
import { railChainId, railEndpoint, type RailSettings } from '../settings.js';
import { balanceClient } from './balances.js';
import { usableRailRpcUrls } from './chain-ids.js';
import { readEvmHoldings } from './holdings.js';
import { rpcBatch } from './rpc-batch.js';

/**
 * An EVM sweep plan (docs/treasury.md): every source holding tokens sends them all to the
 * destination in one ERC-20 `transfer`, after the funding address tops up the gas it lacks (one
 * plain transfer per source that needs it). Every transaction is unsigned, with its nonce, gas limit,
 * EIP-1559 fee caps and chain id, all read at one block, so the same chain state gives the same
 * plan. Re-planned after a partial broadcast, top-ups already made show as gas the source holds
 * (no second top-up) and nonces come from the chain (none reused).
 */
export interface EvmSweepTx {
  kind: 'top_up' | 'transfer';
  from: string;
  to: string;
  /** Wei, decimal string. */
  value: string;
  data: Hex;
  nonce: number;
  gas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  chainId: number;
  type: 'eip1559';
}

export interface EvmSweepPlan {
  chainId: number;
  blockNumber: string;
  token: string;
  destination: string;
  funding: string;
  sources: Array<{ address: string; path: string | null; amountMinor: string }>;
  transactions: EvmSweepTx[];
  /** Wei: what the funding address sends as gas top-ups, and the most the whole plan can burn in fees. */
  topUpWei: string;
  maxFeeWei: string;
  /** What the funding address holds at the block (wei). */
  fundingBalanceWei: string;
}

/** A plain transfer's gas. */
const topUpGas = 21_000n;
/** The transfer's estimate is raised by this (percent) for the gas limit: storage costs differ by source. */
const gasMarginPercent = 25n;

/** EIP-1559 fee caps from the block: the node's priority fee, and `maxFeePerGas = 2 × baseFee + priority`. */
export async function feeCaps(client: ReturnType<typeof balanceClient>, blockNumber: bigint): Promise<{ maxFee: bigint; priority: bigint }> {
  const blk = await client.getBlock({ blockNumber });
  const baseFee = blk.baseFeePerGas ?? (await client.getGasPrice());
  const priority = BigInt((await client.request({ method: 'eth_maxPriorityFeePerGas' as never })) as string);
  return { maxFee: 2n * baseFee + priority, priority };
}

/** Each address's account nonce at `block`, in JSON-RPC batches. */
export async function nonces(url: string, addresses: readonly Address[], block: Hex): Promise<number[]> {
  const answers = await rpcBatch(url, addresses.map((a) => ({ method: 'eth_getTransactionCount', params: [a, block] })));
  return answers.map((r) => Number(BigInt(r)));
}


export type SweepPlanInput = { sources: ReadonlyArray<{ address: string; path: string | null }>; destination: string; funding: string };

/**
 * What every EVM sweep plan starts from, read at one block: the token, the chain, each source
 * holding tokens (with its amount and gas) and the funding address's balance. Refuses (nothing
 * to sweep, a balance unread) with a sentence for the merchant.
 */
export async function readSweepState(rails: RailSettings, rail: UsdtRail, environment: Environment, input: SweepPlanInput) {
  const token = railEndpoint(rails, rail, environment).usdtContract as Address | undefined;
  const url = usableRailRpcUrls(rails, rail, environment)[0];
  if (!token || !url) throw new SweepPlanRefused(`${rail} has no token contract or usable RPC in the ${environment} environment.`);
  const client = balanceClient(url);
  const chainId = railChainId(rails, rail, environment) ?? (await client.getChainId());
  const funding = input.funding.toLowerCase() as Address;
  const all = input.sources.map((s) => s.address.toLowerCase() as Address);
  const read = await readEvmHoldings(url, token, [...all, funding]);
  const holding = input.sources
    .map((s, i) => ({ address: all[i]!, path: s.path, amount: read.token[i], native: read.native[i] }))
    .filter((s) => s.amount === undefined || s.amount > 0n);
  if (holding.some((s) => s.amount === undefined || s.native === undefined)) throw new SweepPlanRefused('Some balances could not be read; nothing was planned. Try again.');
  if (holding.length === 0) throw new SweepPlanRefused('No address holds tokens on this rail: nothing to sweep.');
  const fundingBalance = read.native[all.length];
  if (fundingBalance === undefined) throw new SweepPlanRefused("The funding address's balance could not be read.");
  const sources = holding.map((h) => ({ address: h.address, path: h.path, amount: h.amount!, native: h.native! }));
  return { token, url, client, chainId, funding, blockNumber: read.blockNumber, block: numberToHex(read.blockNumber), sources, fundingBalance };
}

/** One `eth_estimateGas` of a source's whole transfer to the destination, at the plan's block. */
export async function estimateTransferGas(client: ReturnType<typeof balanceClient>, token: Address, from: Address, destination: Address, amount: bigint, block: Hex): Promise<bigint> {
  const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [destination, amount] });
  return BigInt((await client.request({ method: 'eth_estimateGas' as never, params: [{ from, to: token, data }, block] as never })) as string);
}

export async function planEvmSweep(rails: RailSettings, rail: UsdtRail, environment: Environment, input: SweepPlanInput): Promise<EvmSweepPlan> {
  const { token, url, client, chainId, funding, blockNumber, block, sources: holding, fundingBalance } = await readSweepState(rails, rail, environment, input);
  const { maxFee, priority } = await feeCaps(client, blockNumber);
  const first = holding[0]!;
  const data = (amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [input.destination as Address, amount] });
  const estimate = await estimateTransferGas(client, token, first.address, input.destination as Address, first.amount, block);
  const gas = (estimate * (100n + gasMarginPercent)) / 100n;
  const [fundingNonce, ...sourceNonces] = await nonces(url, [funding, ...holding.map((h) => h.address)], block);

  const fee = { maxFeePerGas: maxFee.toString(), maxPriorityFeePerGas: priority.toString(), chainId, type: 'eip1559' as const };
  const topUps: EvmSweepTx[] = [];
  let topUpWei = 0n;
  for (const h of holding) {
    const need = gas * maxFee - h.native;
    if (need <= 0n) continue;
    topUpWei += need;
    topUps.push({ kind: 'top_up', from: funding, to: h.address, value: need.toString(), data: '0x', nonce: fundingNonce! + topUps.length, gas: topUpGas.toString(), ...fee });
  }
  const transfers: EvmSweepTx[] = holding.map((h, i) => ({
    kind: 'transfer', from: h.address, to: token.toLowerCase(), value: '0', data: data(h.amount), nonce: sourceNonces[i]!, gas: gas.toString(), ...fee,
  }));
  const maxFeeWei = BigInt(topUps.length) * topUpGas * maxFee + BigInt(transfers.length) * gas * maxFee;
  if (fundingBalance < topUpWei + BigInt(topUps.length) * topUpGas * maxFee) {
    throw new SweepPlanRefused(`The funding address holds ${fundingBalance} wei; the top-ups need ${topUpWei + BigInt(topUps.length) * topUpGas * maxFee} wei with their fees.`);
  }
  return {
    chainId, blockNumber: blockNumber.toString(), token: token.toLowerCase(), destination: input.destination.toLowerCase(), funding,
    sources: holding.map((h) => ({ address: h.address, path: h.path, amountMinor: h.amount.toString() })),
    transactions: [...topUps, ...transfers], topUpWei: topUpWei.toString(), maxFeeWei: maxFeeWei.toString(), fundingBalanceWei: fundingBalance.toString(),
  };
}
