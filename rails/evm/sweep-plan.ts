import { encodeFunctionData, erc20Abi, numberToHex, type Address, type Hex } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { SweepPlanRefused } from '../payment-method.js';
import { railChainId, railEndpoint, type RailSettings } from '../settings.js';
import { balanceClient } from './balances.js';
import { usableRailRpcUrls } from './chain-ids.js';
import { chunksOf, readEvmHoldings } from './holdings.js';

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

async function nonces(url: string, addresses: readonly Address[], block: Hex): Promise<number[]> {
  const out: number[] = [];
  for (const chunk of chunksOf(addresses, 250)) {
    const body = chunk.map((a, id) => ({ jsonrpc: '2.0', id, method: 'eth_getTransactionCount', params: [a, block] }));
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
    const answers = (await res.json()) as Array<{ id: number; result?: string }>;
    if (!Array.isArray(answers)) throw new Error('the node answered no batch');
    const byId = new Map(answers.map((a) => [a.id, a.result]));
    for (let i = 0; i < chunk.length; i++) {
      const r = byId.get(i);
      if (typeof r !== 'string') throw new Error('the node answered no nonce');
      out.push(Number(BigInt(r)));
    }
  }
  return out;
}


export async function planEvmSweep(
  rails: RailSettings,
  rail: UsdtRail,
  environment: Environment,
  input: { sources: ReadonlyArray<{ address: string; path: string | null }>; destination: string; funding: string },
): Promise<EvmSweepPlan> {
  const token = railEndpoint(rails, rail, environment).usdtContract as Address | undefined;
  const url = usableRailRpcUrls(rails, rail, environment)[0];
  if (!token || !url) throw new SweepPlanRefused(`${rail} has no token contract or usable RPC in the ${environment} environment.`);
  const client = balanceClient(url);
  const chainId = railChainId(rails, rail, environment) ?? (await client.getChainId());
  const funding = input.funding.toLowerCase() as Address;
  const all = input.sources.map((s) => s.address.toLowerCase() as Address);
  const read = await readEvmHoldings(url, token, [...all, funding]);
  const block = numberToHex(read.blockNumber);
  const holding = input.sources
    .map((s, i) => ({ address: all[i]!, path: s.path, amount: read.token[i], native: read.native[i] }))
    .filter((s) => s.amount === undefined || s.amount > 0n);
  if (holding.some((s) => s.amount === undefined || s.native === undefined)) throw new SweepPlanRefused('Some balances could not be read; nothing was planned. Try again.');
  if (holding.length === 0) throw new SweepPlanRefused('No address holds tokens on this rail: nothing to sweep.');
  const fundingBalance = read.native[all.length];
  if (fundingBalance === undefined) throw new SweepPlanRefused("The funding address's balance could not be read.");

  const blk = await client.getBlock({ blockNumber: read.blockNumber });
  const baseFee = blk.baseFeePerGas ?? (await client.getGasPrice());
  const priority = BigInt((await client.request({ method: 'eth_maxPriorityFeePerGas' as never })) as string);
  const maxFee = 2n * baseFee + priority;
  const first = holding[0]!;
  const data = (amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [input.destination as Address, amount] });
  const estimate = BigInt((await client.request({
    method: 'eth_estimateGas' as never,
    params: [{ from: first.address, to: token, data: data(first.amount!) }, block] as never,
  })) as string);
  const gas = (estimate * (100n + gasMarginPercent)) / 100n;
  const [fundingNonce, ...sourceNonces] = await nonces(url, [funding, ...holding.map((h) => h.address)], block);

  const fee = { maxFeePerGas: maxFee.toString(), maxPriorityFeePerGas: priority.toString(), chainId, type: 'eip1559' as const };
  const topUps: EvmSweepTx[] = [];
  let topUpWei = 0n;
  for (const h of holding) {
    const need = gas * maxFee - h.native!;
    if (need <= 0n) continue;
    topUpWei += need;
    topUps.push({ kind: 'top_up', from: funding, to: h.address, value: need.toString(), data: '0x', nonce: fundingNonce! + topUps.length, gas: topUpGas.toString(), ...fee });
  }
  const transfers: EvmSweepTx[] = holding.map((h, i) => ({
    kind: 'transfer', from: h.address, to: token.toLowerCase(), value: '0', data: data(h.amount!), nonce: sourceNonces[i]!, gas: gas.toString(), ...fee,
  }));
  const maxFeeWei = BigInt(topUps.length) * topUpGas * maxFee + BigInt(transfers.length) * gas * maxFee;
  if (fundingBalance < topUpWei + BigInt(topUps.length) * topUpGas * maxFee) {
    throw new SweepPlanRefused(`The funding address holds ${fundingBalance} wei; the top-ups need ${topUpWei + BigInt(topUps.length) * topUpGas * maxFee} wei with their fees.`);
  }
  return {
    chainId, blockNumber: read.blockNumber.toString(), token: token.toLowerCase(), destination: input.destination.toLowerCase(), funding,
    sources: holding.map((h) => ({ address: h.address, path: h.path, amountMinor: h.amount!.toString() })),
    transactions: [...topUps, ...transfers], topUpWei: topUpWei.toString(), maxFeeWei: maxFeeWei.toString(), fundingBalanceWei: fundingBalance.toString(),
  };
}
