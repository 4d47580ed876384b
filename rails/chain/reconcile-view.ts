import { createHash } from 'node:crypto';
import { getAddress, type Address, type PublicClient } from 'viem';
import type { Environment } from '../../domain/environment.js';
import { tronAddressFromBytes, tronAddressToEvmHex } from '../tron/address.js';
import type { UsdtRail } from '../../domain/rails.js';
import { balanceClient, firstBlockAtOrAfter, incomingTransfers, receiptVouches, tokenBalancesAt } from '../evm/balances.js';
import { usableRpcUrls } from '../evm/chain-ids.js';
import type { TransferLog } from '../evm/transfer-logs.js';
import { railDecimals, railFacts } from '../registry.js';
import { railEndpoint, railRpcUrls, type RailSettings } from '../settings.js';
import { trc20Balances } from '../tron/balances.js';

/**
 * One rail as the reconciler reads it, over every RPC the deployment configured for it
 * (docs/reconciliation.md): balances from the first provider that answers, and a targeted rescan
 * of one address on all of them. EVM rails read balances at one exact height (the settled one);
 * TRON's constant call reads the latest state only, so its heights bracket the read instead.
 */
export interface BalanceSnapshot {
  /** Per holder, in order; undefined when it could not be read this run. */
  balances: Array<bigint | undefined>;
  /** Deposits at or below this height are in the balances. */
  countUpTo: bigint;
  /**
   * True: the balances are those at `countUpTo`, so deposits above it are not in them. False: they
   * were read at some height at or above it, so an address with a deposit recorded above is left
   * for the next run (it cannot be judged).
   */
  exact: boolean;
  /** The highest block a targeted rescan reads. */
  rescanTo: bigint;
}

export interface RescanResult {
  /** Transfers to the address that every provider reported, or that a receipt read from another provider vouches for. */
  found: TransferLog[];
  /** Transfers one provider reported that no other one could confirm: not recorded. */
  unverified: number;
  /** Providers whose answer covered the whole window. */
  answered: number;
}

export type RescanStart = { block: bigint } | { sinceMs: number };

export interface ReconcileChain {
  rail: UsdtRail;
  environment: Environment;
  family: 'evm' | 'tron';
  decimals: number;
  /** A hash of the providers a rescan asks (never their URLs, which may carry keys). */
  fingerprint: string;
  providers: number;
  /** Balances of the holders (as the watch set stores them); `cap` lowers the height (the watcher's cursor). Null when no provider answered. */
  snapshot(holders: readonly string[], cap: bigint | null): Promise<BalanceSnapshot | null>;
  /**
   * The address's incoming transfers up to `toBlock` on every provider, from a block (the last
   * one at which its balance was explained) or a time (its owner's creation, less a margin for clocks).
   */
  rescan(holder: string, from: RescanStart, toBlock: bigint): Promise<RescanResult>;
  /** The form a deposit records an address in, from its 20-byte hex form. */
  stored(hex20: string): string;
}

/** A window starts this long before its owner was created: node and database clocks differ. */
const windowMarginMs = 10 * 60_000;

/** First blocks of a minute, per rail: a rescan's start is found by halving once, then remembered. */
const startBlocks = new Map<string, bigint>();

function fingerprintOf(urls: readonly string[]): string {
  return createHash('sha256').update(urls.join('\n')).digest('hex').slice(0, 16);
}

interface Parts {
  rail: UsdtRail;
  environment: Environment;
  token: Address;
  urls: readonly string[];
  /** The JSON-RPC client of a provider (TRON: its /jsonrpc). */
  client(url: string): PublicClient;
  hex(holder: string): Address;
  stored(hex20: string): string;
  snapshotFrom(url: string, holders: readonly string[], cap: bigint | null): Promise<BalanceSnapshot>;
}

/** The reconciler's view of a rail, or null when the rail has no token contract (or mint) in the environment, or is Solana. */
export function reconcileChain(rails: RailSettings, rail: UsdtRail, environment: Environment): ReconcileChain | null {
  const family = railFacts[rail].family as 'evm' | 'tron' | 'other';
  const contract = railEndpoint(rails, rail, environment).usdtContract;
  if (!contract || (family !== 'evm' && family !== 'tron')) return null;
  const urls = usableRpcUrls(railRpcUrls(rails, rail, environment));
  const confirmations = rails[rail].confirmations;
  const parts: Parts =
    family === 'evm'
      ? {
          rail, environment, urls, token: contract as Address,
          client: (url) => balanceClient(url),
          hex: (holder) => holder.toLowerCase() as Address,
          stored: (hex) => getAddress(hex),
          async snapshotFrom(url, holders, cap) {
            const client = balanceClient(url);
            const head = await client.getBlockNumber({ cacheTime: 0 });
            let height = confirmations !== undefined ? head - BigInt(confirmations) + 1n : (await client.getBlock({ blockTag: 'finalized' })).number;
            if (cap !== null && cap < height) height = cap;
            const balances = await tokenBalancesAt(url, contract as Address, holders.map((h) => h.toLowerCase() as Address), height);
            return { balances, countUpTo: height, exact: true, rescanTo: height };
          },
        }
      : {
          rail, environment, urls, token: tronAddressToEvmHex(contract),
          client: (url) => balanceClient(`${url.replace(/\/$/, '')}/jsonrpc`),
          hex: (holder) => tronAddressToEvmHex(holder),
          stored: (hex) => tronAddressFromBytes(Buffer.from(hex.slice(2), 'hex')),
          async snapshotFrom(url, holders) {
            const client = balanceClient(`${url.replace(/\/$/, '')}/jsonrpc`);
            const before = await client.getBlockNumber({ cacheTime: 0 });
            const balances = await trc20Balances(url, contract, holders);
            const after = await client.getBlockNumber({ cacheTime: 0 });
            return { balances, countUpTo: before, exact: false, rescanTo: after };
          },
        };
  return {
    rail,
    environment,
    family,
    decimals: railDecimals[rail],
    fingerprint: fingerprintOf(urls),
    providers: urls.length,
    stored: parts.stored,
    snapshot: (holders, cap) => firstAnswer(parts, holders, cap),
    rescan: (holder, from, toBlock) => rescanEverywhere(parts, holder, from, toBlock),
  };
}

/** Balances from the first provider, in order, that answers for at least one holder. */
async function firstAnswer(p: Parts, holders: readonly string[], cap: bigint | null): Promise<BalanceSnapshot | null> {
  for (const url of p.urls) {
    try {
      const snap = await p.snapshotFrom(url, holders, cap);
      if (holders.length === 0 || snap.balances.some((b) => b !== undefined)) return snap;
    } catch {
      // This provider could not answer now: the next one is asked.
    }
  }
  return null;
}

async function windowStart(p: Parts, client: PublicClient, start: RescanStart, toBlock: bigint): Promise<bigint> {
  if ('block' in start) return start.block;
  const minute = Math.floor((start.sinceMs - windowMarginMs) / 60_000);
  const key = `${p.rail}:${p.environment}:${minute}`;
  const known = startBlocks.get(key);
  if (known !== undefined && known <= toBlock) return known;
  const first = await firstBlockAtOrAfter(client, BigInt(minute * 60), toBlock);
  if (startBlocks.size > 10_000) startBlocks.clear();
  startBlocks.set(key, first);
  return first;
}

/**
 * Reads the address's incoming transfers on every provider and keeps each one that all of them
 * reported, or that a receipt read from another provider vouches for: a provider that
 * hides a transfer cannot lose it while another tells the truth, and one that invents a transfer
 * cannot make it count alone (with a single provider configured, its word is all there is).
 */
async function rescanEverywhere(p: Parts, holder: string, start: RescanStart, toBlock: bigint): Promise<RescanResult> {
  const reports = new Map<string, { log: TransferLog; by: Set<string> }>();
  const answered: string[] = [];
  for (const url of p.urls) {
    try {
      const client = p.client(url);
      const from = await windowStart(p, client, start, toBlock);
      for (const log of await incomingTransfers(client, p.token, p.hex(holder), from, toBlock)) {
        const key = `${log.txHash}:${log.logIndex}`;
        const entry = reports.get(key) ?? { log, by: new Set<string>() };
        entry.by.add(url);
        reports.set(key, entry);
      }
      answered.push(url);
    } catch {
      // A provider that fails its rescan vouches for nothing and hides nothing: the others decide.
    }
  }
  const found: TransferLog[] = [];
  let unverified = 0;
  for (const { log, by } of reports.values()) {
    if (p.urls.every((u) => by.has(u)) || (await vouchedElsewhere(p, log, by))) found.push(log);
    else unverified++;
  }
  return { found, unverified, answered: answered.length };
}

async function vouchedElsewhere(p: Parts, log: TransferLog, reportedBy: Set<string>): Promise<boolean> {
  for (const url of p.urls) {
    if (reportedBy.has(url)) continue;
    if (await receiptVouches(p.client(url), p.token, log).catch(() => false)) return true;
  }
  return false;
}
