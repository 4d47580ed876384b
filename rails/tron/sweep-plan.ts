import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { SweepPlanRefused } from '../payment-method.js';
import { railEndpoint, railRpcUrls, type RailSettings } from '../settings.js';
import { tronAddressToEvmHex } from './address.js';
import { readTronHoldings, tronMulticall3 } from './holdings.js';
import { estimateTronEnergy, readDelegatableEnergySun, readTronAccount, readTronFees, readTronHead, type TronFees } from './resources.js';
import { tronBandwidth, unsignedTronTx, type TronContract, type TronTxHeader, type UnsignedTronTx } from './transaction.js';

/**
 * A TRON sweep plan (docs/treasury.md, "TRON sweep plans"). Every source holding USDT sends it all
 * to the destination in one TRC-20 `transfer`; the energy it needs comes one of two ways:
 * - `energy_delegation`, when the funding account's staked TRX (Stake 2.0) can delegate enough
 *   energy: `DelegateResource` (ENERGY) to each source, its transfer, then `UnDelegateResource`;
 *   the transfer uses the source's free bandwidth, and a source without enough is topped up with
 *   the TRX that bandwidth burns;
 * - `trx_top_ups` otherwise: the funding account sends each source the TRX its transfer burns for
 *   energy and bandwidth.
 * A source whose account does not exist yet (a TRC-20 receipt creates none) is created by the
 * funding account's first TRX transfer to it, which burns the network's new-account fee.
 * Every transaction is unsigned, references the head block and expires with the plan; the same
 * chain state gives the same plan.
 */
export type TronSweepTxKind = 'activate' | 'delegate' | 'top_up' | 'transfer' | 'undelegate';

export interface TronSweepTx extends UnsignedTronTx {
  kind: TronSweepTxKind;
  /** The owner (who signs) and the source it serves. */
  from: string;
  source: string;
  /** TRX moved (activate, top_up) or staked TRX delegated (delegate, undelegate), in sun; the token for a transfer. */
  value: string;
}

export interface TronSweepPlan {
  network: 'tron';
  kind: 'energy_delegation' | 'trx_top_ups';
  blockNumber: string;
  token: string;
  destination: string;
  funding: string;
  expiresAtMs: number;
  sources: Array<{ address: string; path: string | null; amountMinor: string; accountExists: boolean; bandwidth: string; trxSun: string }>;
  transactions: TronSweepTx[];
  /** Per transfer: the energy it is planned with (the node's estimate plus a margin) and its bandwidth. */
  energyPerTransfer: string;
  fees: { energySun: string; bandwidthSun: string; newAccountSun: string };
  /** Staked TRX the funding account can delegate as energy now, and what the delegations take of it (sun). */
  delegatableSun: string;
  delegatedSun: string;
  /** The most the plan burns in TRX (energy, bandwidth, new accounts), in sun: what the plan shows either way. */
  trxBurnedSun: string;
  maxFeeWei: string;
  /** TRX the funding account sends to sources (sun). */
  topUpWei: string;
  fundingBalanceWei: string;
}

/** The plan's transactions expire with it. */
export const tronPlanLifetimeMs = 15 * 60 * 1000;
/** The energy estimate of the first transfer is raised by this (percent): storage costs differ by source. */
const energyMarginPercent = 10n;

/** Staked sun that yields `energy` at the network's ratio, in whole TRX (delegations move whole TRX; at least 1). */
export function stakeForEnergy(energy: bigint, totalEnergyLimit: bigint, totalEnergyWeight: bigint): bigint {
  if (totalEnergyLimit <= 0n) throw new SweepPlanRefused('The network reports no energy limit; nothing was planned.');
  const trx = (energy * totalEnergyWeight + totalEnergyLimit - 1n) / totalEnergyLimit;
  return (trx < 1n ? 1n : trx) * 1_000_000n;
}

const transferData = (destination: string, amount: bigint) =>
  `a9059cbb${tronAddressToEvmHex(destination).slice(2).padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;

interface Holding { address: string; path: string | null; amount: bigint; trx: bigint; exists: boolean; bandwidth: bigint }

function build(header: TronTxHeader, kind: TronSweepTxKind, from: string, source: string, value: bigint, contract: TronContract): TronSweepTx {
  return { kind, from, source, value: value.toString(), ...unsignedTronTx(header, contract) };
}

export async function planTronSweep(
  rails: RailSettings,
  rail: UsdtRail,
  environment: Environment,
  input: { sources: ReadonlyArray<{ address: string; path: string | null }>; destination: string; funding: string },
): Promise<TronSweepPlan> {
  const token = railEndpoint(rails, rail, environment).usdtContract;
  const url = railRpcUrls(rails, rail, environment)[0];
  if (!token || !url) throw new SweepPlanRefused(`${rail} has no token contract or node in the ${environment} environment.`);
  const opts = { timeoutMs: 20_000 };
  const head = await readTronHead(url, opts);
  const fees: TronFees = await readTronFees(url, opts);
  const read = await readTronHoldings(url, tronMulticall3[environment], token, [...input.sources.map((s) => s.address), input.funding], opts);
  const candidates = input.sources.map((s, i) => ({ ...s, amount: read.token[i], trx: read.native[i] })).filter((s) => s.amount === undefined || s.amount > 0n);
  if (candidates.some((s) => s.amount === undefined || s.trx === undefined)) throw new SweepPlanRefused('Some balances could not be read; nothing was planned. Try again.');
  if (candidates.length === 0) throw new SweepPlanRefused('No address holds tokens on this rail: nothing to sweep.');
  const fundingTrx = read.native[input.sources.length];
  if (fundingTrx === undefined) throw new SweepPlanRefused("The funding address's balance could not be read.");
  const holding: Holding[] = [];
  for (const s of candidates) {
    const account = await readTronAccount(url, s.address, opts);
    holding.push({ address: s.address, path: s.path, amount: s.amount!, trx: s.trx!, exists: account.exists, bandwidth: account.bandwidth });
  }
  const fundingAccount = await readTronAccount(url, input.funding, opts);
  if (!fundingAccount.exists) throw new SweepPlanRefused('The funding address has no account on TRON: send it TRX first.');
  const first = holding[0]!;
  const estimate = await estimateTronEnergy(url, {
    owner: first.address, contract: token, functionSelector: 'transfer(address,uint256)', parameter: transferData(input.destination, first.amount).slice(8),
  }, opts);
  const energy = (estimate * (100n + energyMarginPercent) + 99n) / 100n;
  const header: TronTxHeader = { refBlockNumber: head.number, refBlockId: head.id, expirationMs: head.timestampMs + tronPlanLifetimeMs, timestampMs: head.timestampMs };
  const transferHeader: TronTxHeader = { ...header, feeLimitSun: energy * fees.energySun };
  const transfers = holding.map((h) => build(transferHeader, 'transfer', h.address, h.address, h.amount, {
    type: 'TriggerSmartContract', owner: h.address, contract: token, data: transferData(input.destination, h.amount),
  }));
  const stake = stakeForEnergy(energy, fundingAccount.totalEnergyLimit, fundingAccount.totalEnergyWeight);
  const delegatable = await readDelegatableEnergySun(url, input.funding, opts);
  const delegation = delegatable >= stake * BigInt(holding.length);
  return assemble({ input, token, head, fees, holding, transfers, energy, stake, delegatable, delegation, header, fundingTrx });
}

function assemble(p: {
  input: { destination: string; funding: string };
  token: string; head: { number: bigint }; fees: TronFees; holding: Holding[]; transfers: TronSweepTx[]; energy: bigint; stake: bigint;
  delegatable: bigint; delegation: boolean; header: TronTxHeader; fundingTrx: bigint;
}): TronSweepPlan {
  const { input, fees, holding, header } = p;
  const funding = input.funding;
  const before: TronSweepTx[] = [];
  const after: TronSweepTx[] = [];
  let topUp = 0n;
  let burned = 0n;
  holding.forEach((h, i) => {
    const transfer = p.transfers[i]!;
    // What the transfer burns for bandwidth when the source lacks it, and for energy without a delegation.
    const bandwidth = tronBandwidth(transfer.raw_data_hex);
    const needs = (bandwidth > h.bandwidth ? bandwidth * fees.bandwidthSun : 0n) + (p.delegation ? 0n : p.energy * fees.energySun);
    burned += needs;
    const send = needs > h.trx ? needs - h.trx : 0n;
    if (!h.exists) burned += fees.newAccountSun;
    if (send > 0n || !h.exists) {
      // A TRX transfer creates the account; one sun is enough when nothing else is needed.
      const amount = send > 0n ? send : 1n;
      topUp += amount;
      before.push(build(header, send > 0n ? 'top_up' : 'activate', funding, h.address, amount, { type: 'TransferContract', owner: funding, to: h.address, amountSun: amount }));
    }
    if (p.delegation) {
      const c = { owner: funding, receiver: h.address, balanceSun: p.stake, resource: 'ENERGY' as const };
      before.push(build(header, 'delegate', funding, h.address, p.stake, { type: 'DelegateResourceContract', ...c }));
      after.push(build(header, 'undelegate', funding, h.address, p.stake, { type: 'UnDelegateResourceContract', ...c }));
    }
  });
  // The funding account's own transactions burn bandwidth at most (its free 600 a day may cover some),
  // and it pays the fee of every account it creates.
  const fundingBurn = [...before, ...after].reduce((sum, t) => sum + tronBandwidth(t.raw_data_hex) * fees.bandwidthSun, 0n);
  burned += fundingBurn;
  const fundingNeeds = topUp + fundingBurn + BigInt(holding.filter((h) => !h.exists).length) * fees.newAccountSun;
  if (p.fundingTrx < fundingNeeds) {
    throw new SweepPlanRefused(`The funding address holds ${p.fundingTrx} sun; the plan needs up to ${fundingNeeds} sun (top-ups, new accounts and bandwidth).`);
  }
  return {
    network: 'tron', kind: p.delegation ? 'energy_delegation' : 'trx_top_ups', blockNumber: p.head.number.toString(), token: p.token, destination: input.destination, funding,
    expiresAtMs: header.expirationMs,
    sources: holding.map((h) => ({ address: h.address, path: h.path, amountMinor: h.amount.toString(), accountExists: h.exists, bandwidth: h.bandwidth.toString(), trxSun: h.trx.toString() })),
    transactions: [...before, ...p.transfers, ...after],
    energyPerTransfer: p.energy.toString(),
    fees: { energySun: fees.energySun.toString(), bandwidthSun: fees.bandwidthSun.toString(), newAccountSun: fees.newAccountSun.toString() },
    delegatableSun: p.delegatable.toString(), delegatedSun: (p.delegation ? p.stake * BigInt(holding.length) : 0n).toString(),
    trxBurnedSun: burned.toString(), maxFeeWei: burned.toString(), topUpWei: topUp.toString(), fundingBalanceWei: p.fundingTrx.toString(),
  };
}
