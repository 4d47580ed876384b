import type { DatabasePool } from 'slonik';
import {
  loadCursor,
  saveCursor,
  seenDeposits,
  setDepositState,
  upsertSeenDeposit,
  type Cursor,
} from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import { type UsdtRail } from '../../domain/rails.js';
import { railDecimals } from '../registry.js';
import { inParallel } from '../chain/reads.js';
import type { WatchSet } from '../chain/watch-set.js';
import { RpcQuorum, type QuorumSource, type WindowRead } from './rpc-quorum.js';

export type { EvmRpc } from './rpc-quorum.js';

/** The most blocks one tick scans; a watcher far behind catches up over several ticks. */
export const maxBlocksPerTick = 2_000n;
/**
 * Where a watcher with no cursor starts: this many blocks behind the head, so a payment made
 * between a link's creation and the watcher's first tick is still found.
 */
export const initialLookbackBlocks = 500n;
/** How far the cursor steps back when the block it stands on was reorganised away. */
const reorgRewindBlocks = 64n;
/** Seen deposits' block heights read at once. */
const hashConcurrency = 4;


/** How one EVM-style chain is read: EVM rails directly; TRON through TronGrid's `/jsonrpc`. */
export interface EvmChainView extends QuorumSource {
  rail: UsdtRail;
  environment: Environment;
  /** Turns a 20-byte hex address from a log into the form the watch set holds. */
  toWatchAddress(hex: string): string;
  /** How long a disputed log holds the cursor (default `disputeHoldBlocks`; tests shorten it). */
  disputeHoldBlocks?: bigint;
}

/**
 * A log one provider reports and no other vouches for holds the cursor below its block, but not
 * for ever: past this many final blocks the cursor passes it (logged as an error), or the whole
 * rail would stall once the window (maxBlocksPerTick from the cursor) could no longer reach the
 * head. Two providers cannot tell a hidden transfer from an invented one; the reconciler, reading
 * balances, is the third witness (docs/reconciliation.md): a real transfer shows in the balance,
 * is rescanned and, still disputed, becomes a reported mismatch; an invented one never shows.
 */
export const disputeHoldBlocks = 1_000n;

/** A deposit recorded by this tick that an earlier read had missed, and which line of defence found it. */
export interface RecoveredDeposit {
  txHash: string;
  logIndex: number;
  blockNumber: string;
  /** `other-provider`: a provider that read its block left it out; `rescan`: an earlier tick read its block without it. */
  by: 'rescan' | 'other-provider';
}

export interface TickResult {
  cursor: Cursor;
  head: string;
  finalized: string;
  /** The tick read up to the head, so the watcher waits a poll interval before the next one. */
  caughtUp: boolean;
  matched: number;
  /**
   * Reads that still failed after their retries (EVM: block heights; Solana: status batches).
   * What they would have settled waits for a later tick; nothing is dropped for it.
   */
  readFailures: number;
  /** EVM-style rails: deposits found only by the rescan or by a second provider (usually none). */
  recovered?: RecoveredDeposit[];
  /** The height of a disputed log the cursor was let past this tick (see disputeHoldBlocks). */
  disputePassed?: string;
}

interface Window {
  to: bigint;
  /** Undefined when there was nothing to read (the cursor at the head). */
  read: WindowRead | undefined;
  matched: number;
  recovered: RecoveredDeposit[];
}

const min = (...xs: bigint[]) => xs.reduce((a, b) => (b < a ? b : a));
/** A cursor moved back: no earlier read counts for the blocks above it any more. */
const rewound = (n: bigint): Cursor => ({ number: String(n > 0n ? n : 0n), hash: null, scannedTo: null });

/**
 * One pass of a watcher over an EVM-style chain:
 *  1. if the cursor's block was reorganised away, step back and scan again (while that cannot be
 *     told, the window is still read but the cursor stays where it is);
 *  2. read every block from the cursor to the head (at most maxBlocksPerTick) for token transfers
 *     to watched addresses and record them as seen (recording one twice changes nothing);
 *  3. move the cursor, which only ever stands on a final block, over the blocks that are final
 *     and were read completely by this tick and an earlier one (see advance);
 *  4. re-check every seen deposit: a block whose hash changed drops it (and rewinds the cursor so a
 *     re-included transfer is found again); a block at or below the finalized/depth mark confirms it.
 * Every fact comes from the rail's providers through RpcQuorum: two must agree when two or more
 * are configured. A block that cannot be read or agreed on changes nothing: the cursor does not
 * move past it and its deposits stay seen until a later tick reads it.
 * The database holds the cursor and the deposits; telling their owners happens afterwards
 * (see signal-deposits.ts), so a crash between the two loses nothing.
 */
export async function scanEvmTick(pool: DatabasePool, view: EvmChainView, watch: WatchSet, cursorIn: Cursor | null, nowMs: number): Promise<TickResult> {
  const { rail, environment } = view;
  const q = await RpcQuorum.open(view, nowMs);
  const start = q.head > initialLookbackBlocks ? q.head - initialLookbackBlocks : 0n;
  let cursor = cursorIn ?? (await loadCursor(pool, rail, environment)) ?? { number: String(start), hash: null };
  const standing = cursor.hash ? await q.hashAt(BigInt(cursor.number)) : undefined;
  const stands = !cursor.hash ? true : standing === undefined ? undefined : standing === cursor.hash;
  if (stands === false) cursor = rewound(BigInt(cursor.number) - reorgRewindBlocks);
  const window = await scanWindow(pool, view, watch, q, cursor, nowMs);
  // Unknown whether the cursor's block still stands: the window is read (what it records is only
  // seen), but the cursor does not move past a block that may have been reorganised away.
  const moved = await advance(q, cursor, window, stands === true, view.disputeHoldBlocks ?? disputeHoldBlocks);
  cursor = moved.cursor;
  cursor = await settleSeenDeposits(pool, view, q, cursor);
  await saveCursor(pool, rail, environment, cursor);
  return {
    cursor,
    head: String(q.head),
    finalized: String(q.finalized),
    caughtUp: window.to >= q.head,
    matched: window.matched,
    readFailures: q.unread.size,
    recovered: window.recovered,
    ...(moved.disputePassed !== undefined ? { disputePassed: String(moved.disputePassed) } : {}),
  };
}

/** Records the matching transfers of the blocks after the cursor, up to the head or maxBlocksPerTick. */
async function scanWindow(pool: DatabasePool, view: EvmChainView, watch: WatchSet, q: RpcQuorum, cursor: Cursor, nowMs: number): Promise<Window> {
  const from = BigInt(cursor.number) + 1n;
  const to = min(q.head, from + maxBlocksPerTick - 1n);
  if (to < from) return { to: BigInt(cursor.number), read: undefined, matched: 0, recovered: [] };
  await watch.refresh(pool, nowMs);
  // Matched on the log's hex recipient (its 40 digits); only a match is checksummed into its stored form.
  const read = await q.logs(from, to, (hex40) => watch.match(hex40, nowMs) !== undefined);
  const readBefore = cursor.scannedTo == null ? -1n : BigInt(cursor.scannedTo);
  let matched = 0;
  const recovered: RecoveredDeposit[] = [];
  for (const log of read.logs) {
    const owner = watch.match(log.to, nowMs);
    if (!owner) continue;
    matched++;
    const inserted = await upsertSeenDeposit(pool, view.rail, view.environment, {
      txHash: log.txHash,
      logIndex: log.logIndex,
      to: view.toWatchAddress(log.to),
      from: view.toWatchAddress(log.from),
      amountMinor: log.value,
      decimals: railDecimals[view.rail],
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
      owner,
    });
    if (inserted && (log.missedByOne || log.blockNumber <= readBefore)) {
      recovered.push({ txHash: log.txHash, logIndex: log.logIndex, blockNumber: String(log.blockNumber), by: log.missedByOne ? 'other-provider' : 'rescan' });
    }
  }
  return { to, read, matched, recovered };
}

/**
 * Where the cursor may stand after this tick. It passes a block only when that block is final
 * (at or below the finalized/depth mark), was read completely by this tick (from two providers
 * when two are configured, with no log left unconfirmed at or below it) and by an earlier one
 * (`scannedTo`, carried from tick to tick): one answer that came back empty or short, even at a
 * depth of 1 where the head is final at once, is corrected by the other read. After a restart
 * with no earlier read on record, the first tick only reads. `mayMove` is false while the block
 * the cursor stands on cannot be checked: then only the record of what was read moves.
 */
async function advance(q: RpcQuorum, cursor: Cursor, w: Window, mayMove: boolean, holdBlocks: bigint): Promise<{ cursor: Cursor; disputePassed?: bigint }> {
  if (!w.read?.complete) return { cursor }; // an earlier complete read (scannedTo) still stands
  const at = BigInt(cursor.number);
  const held = w.read.heldBelow;
  // A dispute older than the hold is let past (disputeHoldBlocks): the reconciler judges it from balances.
  const passed = held !== undefined && q.finalized >= held + holdBlocks ? held : undefined;
  const scannedTo = held === undefined || passed !== undefined ? w.to : min(w.to, held - 1n);
  let next: Cursor = cursor;
  if (mayMove && cursor.scannedTo != null) {
    const limit = min(q.finalized, scannedTo, BigInt(cursor.scannedTo));
    const hash = limit > at ? await q.hashAt(limit) : undefined;
    // Without the hash of the new block the next tick could not check it for a reorganisation.
    if (hash !== undefined) next = { number: String(limit), hash };
  }
  const out = { ...next, scannedTo: String(scannedTo > BigInt(next.number) ? scannedTo : BigInt(next.number)) };
  return passed !== undefined && BigInt(next.number) >= passed ? { cursor: out, disputePassed: passed } : { cursor: out };
}

/**
 * Settles seen deposits by re-reading their blocks' hashes. Only a hash read back that differs
 * from the recorded one (another block now stands at that height, as two providers agree when two
 * are configured) drops a deposit; a block that could not be read leaves its deposits seen, to be
 * read again next tick. A deposit confirms once its block is final and its hash still agrees.
 */
async function settleSeenDeposits(pool: DatabasePool, view: EvmChainView, q: RpcQuorum, cursor: Cursor): Promise<Cursor> {
  const seen = (await seenDeposits(pool, view.rail, view.environment)).filter((d) => BigInt(d.block_number) <= q.head);
  const heights = [...new Set(seen.map((d) => d.block_number))];
  const now = new Map(await inParallel(heights, hashConcurrency, async (h) => [h, await q.hashAt(BigInt(h))] as const));
  let rewindTo: bigint | undefined;
  for (const d of seen) {
    const hash = now.get(d.block_number);
    if (hash === undefined) continue;
    const n = BigInt(d.block_number);
    if (hash !== d.block_hash) {
      await setDepositState(pool, view.rail, view.environment, d.tx_hash, d.log_index, 'dropped');
      if (rewindTo === undefined || n - 1n < rewindTo) rewindTo = n - 1n;
    } else if (n <= q.finalized) {
      await setDepositState(pool, view.rail, view.environment, d.tx_hash, d.log_index, 'confirmed');
    }
  }
  if (rewindTo !== undefined && rewindTo < BigInt(cursor.number)) return rewound(rewindTo);
  // A reorganisation inside the window: what an earlier tick read there may have been the old blocks.
  if (rewindTo !== undefined && cursor.scannedTo != null && rewindTo < BigInt(cursor.scannedTo)) return { ...cursor, scannedTo: null };
  return cursor;
}
