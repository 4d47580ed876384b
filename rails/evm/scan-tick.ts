import type { PublicClient } from 'viem';
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
import { inParallel, retryRead } from '../chain/reads.js';
import { transferLogs } from './transfer-logs.js';
import type { WatchSet } from '../chain/watch-set.js';

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
  /**
   * Reads that still failed after their retries (EVM: block heights; Solana: status batches).
   * What they would have settled waits for a later tick; nothing is dropped for it.
   */
  readFailures: number;
}

async function finalizedBlock(view: EvmChainView, head: bigint): Promise<bigint> {
  if (view.confirmations !== undefined) return head - BigInt(view.confirmations) + 1n;
  return (await view.client.getBlock({ blockTag: 'finalized' })).number;
}

/** Block-hash reads: tries per height within one tick, the first backoff, and heights read at once. */
const hashRetry = { attempts: 3, backoffMs: 250 };
const hashConcurrency = 4;
/** Hash reads stop starting this long into a tick, well inside the activity's 2-minute timeout. */
const hashReadBudgetMs = 60_000;

/**
 * The hashes of the blocks one tick looks at, as the node tells them now. Undefined means the
 * node would not tell (a read error, a timeout, a malformed body, a block of another height, or
 * no such block yet on a lagging node): that is never evidence of a reorganisation. Only a hash
 * read back that differs from the recorded one is. Heights that could not be read are counted.
 */
class BlockHashes {
  readonly unread = new Set<bigint>();
  private readonly deadlineMs = Date.now() + hashReadBudgetMs;
  /** One read per height per tick, whether it answered or not. */
  private readonly reads = new Map<bigint, Promise<string | undefined>>();

  constructor(private readonly client: PublicClient) {}

  at(n: bigint): Promise<string | undefined> {
    let read = this.reads.get(n);
    if (!read) this.reads.set(n, (read = this.read(n)));
    return read;
  }

  private async read(n: bigint): Promise<string | undefined> {
    const hash = await retryRead(async () => {
      const block = await this.client.getBlock({ blockNumber: n });
      return block.number === n && block.hash ? block.hash : undefined;
    }, { ...hashRetry, deadlineMs: this.deadlineMs });
    if (hash === undefined) this.unread.add(n);
    return hash;
  }
}

/**
 * One pass of a watcher over an EVM-style chain:
 *  1. if the cursor's block was reorganised away, step back and scan again;
 *  2. scan the next range for token transfers to watched addresses and record them as seen;
 *  3. re-check every seen deposit: a block whose hash changed drops it (and rewinds the cursor so a
 *     re-included transfer is found again); a block at or below the finalized/depth mark confirms it.
 * A block that cannot be read changes nothing: the cursor does not move past it and its deposits
 * stay seen until a later tick reads it (see BlockHashes).
 * The database holds the cursor and the deposits; telling their owners happens afterwards
 * (see signal-deposits.ts), so a crash between the two loses nothing.
 */
export async function scanEvmTick(pool: DatabasePool, view: EvmChainView, watch: WatchSet, cursorIn: Cursor | null, nowMs: number): Promise<TickResult> {
  const { rail, environment, client } = view;
  const hashes = new BlockHashes(client);
  const head = await client.getBlockNumber();
  const finalized = await finalizedBlock(view, head);
  const start = head > initialLookbackBlocks ? head - initialLookbackBlocks : 0n;
  let cursor = cursorIn ?? (await loadCursor(pool, rail, environment)) ?? { number: String(start), hash: null };
  let canScan = true;
  if (cursor.hash) {
    const now = await hashes.at(BigInt(cursor.number));
    // Unknown whether the cursor's block still stands: scanning past it could skip a reorganised range.
    if (now === undefined) canScan = false;
    else if (now !== cursor.hash) {
      const back = BigInt(cursor.number) - reorgRewindBlocks;
      cursor = { number: String(back > 0n ? back : 0n), hash: null };
    }
  }
  let matched = 0;
  if (canScan) ({ cursor, matched } = await scanRange(pool, view, watch, hashes, cursor, head, nowMs));
  cursor = await settleSeenDeposits(pool, view, hashes, head, finalized, cursor);
  await saveCursor(pool, rail, environment, cursor);
  return {
    cursor,
    head: String(head),
    finalized: String(finalized),
    caughtUp: BigInt(cursor.number) >= head,
    matched,
    readFailures: hashes.unread.size,
  };
}

/** Records matching transfers after the cursor (up to maxBlocksPerTick) and moves the cursor over them. */
async function scanRange(pool: DatabasePool, view: EvmChainView, watch: WatchSet, hashes: BlockHashes, cursor: Cursor, head: bigint, nowMs: number): Promise<{ cursor: Cursor; matched: number }> {
  const from = BigInt(cursor.number) + 1n;
  const to = head < from + maxBlocksPerTick - 1n ? head : from + maxBlocksPerTick - 1n;
  if (to < from) return { cursor, matched: 0 };
  let matched = 0;
  await watch.refresh(pool, nowMs);
  // Matched on the log's hex recipient (its 40 digits); only a match is checksummed into its stored form.
  const watched = (hex40: string) => watch.match(hex40, nowMs) !== undefined;
  for (const log of await transferLogs(view.client, view.token, from, to, watched)) {
    const owner = watch.match(log.to, nowMs);
    if (!owner) continue;
    const address = view.toWatchAddress(log.to);
    matched++;
    await upsertSeenDeposit(pool, view.rail, view.environment, {
      txHash: log.txHash,
      logIndex: log.logIndex,
      to: address,
      from: view.toWatchAddress(log.from),
      amountMinor: log.value,
      decimals: railDecimals[view.rail],
      blockNumber: log.blockNumber,
      blockHash: log.blockHash,
      owner,
    });
  }
  // Without the hash of `to` the next tick could not check it for a reorganisation: the cursor
  // stays where it was and the range is scanned again (recording a deposit twice changes nothing).
  const hash = await hashes.at(to);
  return { cursor: hash === undefined ? cursor : { number: String(to), hash }, matched };
}

/**
 * Settles seen deposits by re-reading their blocks' hashes. Only a hash read back that differs
 * from the recorded one (another block now stands at that height) drops a deposit; a block that
 * could not be read leaves its deposits seen, to be read again next tick.
 */
async function settleSeenDeposits(pool: DatabasePool, view: EvmChainView, hashes: BlockHashes, head: bigint, finalized: bigint, cursor: Cursor): Promise<Cursor> {
  const seen = (await seenDeposits(pool, view.rail, view.environment)).filter((d) => BigInt(d.block_number) <= head);
  const heights = [...new Set(seen.map((d) => d.block_number))];
  const now = new Map(await inParallel(heights, hashConcurrency, async (h) => [h, await hashes.at(BigInt(h))] as const));
  let rewindTo: bigint | undefined;
  for (const d of seen) {
    const hash = now.get(d.block_number);
    if (hash === undefined) continue;
    const n = BigInt(d.block_number);
    if (hash !== d.block_hash) {
      await setDepositState(pool, view.rail, view.environment, d.tx_hash, d.log_index, 'dropped');
      if (rewindTo === undefined || n - 1n < rewindTo) rewindTo = n - 1n;
    } else if (n <= finalized) {
      await setDepositState(pool, view.rail, view.environment, d.tx_hash, d.log_index, 'confirmed');
    }
  }
  if (rewindTo !== undefined && rewindTo < BigInt(cursor.number)) return { number: String(rewindTo), hash: null };
  return cursor;
}
