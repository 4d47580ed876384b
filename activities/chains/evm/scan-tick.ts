import type { PublicClient } from 'viem';
import type { DatabasePool } from 'slonik';
import {
  loadCursor,
  saveCursor,
  seenDeposits,
  setDepositState,
  upsertSeenDeposit,
  type Cursor,
} from '../../../db/chain-repo.js';
import type { Environment } from '../../../domain/environment.js';
import { railDecimals, type UsdtRail } from '../../../domain/rails.js';
import { transferLogs } from './transfer-logs.js';
import type { WatchSet } from '../watch-set.js';

/** The most blocks one tick scans; a watcher far behind catches up over several ticks. */
export const maxBlocksPerTick = 2_000n;
/**
 * Where a watcher with no cursor starts: this many blocks behind the head, so a payment made
 * between a link's creation and the watcher's first tick is still found.
 */
export const initialLookbackBlocks = 500n;
/** How far the cursor steps back when the block it stands on was reorganised away. */
const reorgRewindBlocks = 64n;

/** How one EVM-style chain is read: EVM rails directly; TRON through TronGrid's `/jsonrpc`. */
export interface EvmChainView {
  rail: UsdtRail;
  environment: Environment;
  client: PublicClient;
  token: `0x${string}`;
  /** Turns a 20-byte hex address from a log into the form the watch set holds. */
  toWatchAddress(hex: string): string;
  /** Explicit depth (CONFIRMATIONS_<RAIL>); otherwise the chain's `finalized` block decides. */
  confirmations: number | undefined;
}

export interface TickResult {
  cursor: Cursor;
  head: string;
  finalized: string;
  caughtUp: boolean;
  matched: number;
}

async function finalizedBlock(view: EvmChainView, head: bigint): Promise<bigint> {
  if (view.confirmations !== undefined) return head - BigInt(view.confirmations) + 1n;
  return (await view.client.getBlock({ blockTag: 'finalized' })).number;
}

async function blockHash(client: PublicClient, n: bigint): Promise<string | null> {
  try {
    return (await client.getBlock({ blockNumber: n })).hash;
  } catch {
    return null;
  }
}

/**
 * One pass of a watcher over an EVM-style chain:
 *  1. if the cursor's block was reorganised away, step back and scan again;
 *  2. scan the next range for token transfers to watched addresses and record them as seen;
 *  3. re-check every seen deposit: a block whose hash changed drops it (and rewinds the cursor so a
 *     re-included transfer is found again); a block at or below the finalized/depth mark confirms it.
 * The database holds the cursor and the deposits; telling their owners happens afterwards
 * (see signal-deposits.ts), so a crash between the two loses nothing.
 */
export async function scanEvmTick(pool: DatabasePool, view: EvmChainView, watch: WatchSet, cursorIn: Cursor | null, nowMs: number): Promise<TickResult> {
  const { rail, environment, client } = view;
  const head = await client.getBlockNumber();
  const finalized = await finalizedBlock(view, head);
  const start = head > initialLookbackBlocks ? head - initialLookbackBlocks : 0n;
  let cursor = cursorIn ?? (await loadCursor(pool, rail, environment)) ?? { number: String(start), hash: null };
  if (cursor.hash && (await blockHash(client, BigInt(cursor.number))) !== cursor.hash) {
    const back = BigInt(cursor.number) - reorgRewindBlocks;
    cursor = { number: String(back > 0n ? back : 0n), hash: null };
  }
  const from = BigInt(cursor.number) + 1n;
  const to = head < from + maxBlocksPerTick - 1n ? head : from + maxBlocksPerTick - 1n;
  let matched = 0;
  if (to >= from) {
    await watch.refresh(pool, nowMs);
    for (const log of await transferLogs(client, view.token, from, to)) {
      const address = view.toWatchAddress(log.to);
      const owner = watch.match(address, nowMs);
      if (!owner) continue;
      matched++;
      await upsertSeenDeposit(pool, rail, environment, {
        txHash: log.txHash,
        logIndex: log.logIndex,
        to: address,
        from: view.toWatchAddress(log.from),
        amountMinor: log.value,
        decimals: railDecimals[rail],
        blockNumber: log.blockNumber,
        blockHash: log.blockHash,
        owner,
      });
    }
    cursor = { number: String(to), hash: await blockHash(client, to) };
  }
  cursor = await settleSeenDeposits(pool, view, head, finalized, cursor);
  await saveCursor(pool, rail, environment, cursor);
  return { cursor, head: String(head), finalized: String(finalized), caughtUp: BigInt(cursor.number) >= head, matched };
}

async function settleSeenDeposits(pool: DatabasePool, view: EvmChainView, head: bigint, finalized: bigint, cursor: Cursor): Promise<Cursor> {
  const hashes = new Map<string, string | null>();
  let rewindTo: bigint | undefined;
  for (const d of await seenDeposits(pool, view.rail, view.environment)) {
    const n = BigInt(d.block_number);
    if (n > head) continue;
    if (!hashes.has(d.block_number)) hashes.set(d.block_number, await blockHash(view.client, n));
    if (hashes.get(d.block_number) !== d.block_hash) {
      await setDepositState(pool, view.rail, view.environment, d.tx_hash, d.log_index, 'dropped');
      if (rewindTo === undefined || n - 1n < rewindTo) rewindTo = n - 1n;
    } else if (n <= finalized) {
      await setDepositState(pool, view.rail, view.environment, d.tx_hash, d.log_index, 'confirmed');
    }
  }
  if (rewindTo !== undefined && rewindTo < BigInt(cursor.number)) return { number: String(rewindTo), hash: null };
  return cursor;
}
