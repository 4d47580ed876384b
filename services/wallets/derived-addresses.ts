import type { CommonQueryMethods } from 'slonik';
import {
  findGaps,
  findIncompleteGaps,
  findPendingBackfills,
  finishBackfill,
  insertDerivedAddresses,
  pruneGap,
  recordDerive,
  type DeriveRecord,
  type DerivedAddress,
  type DerivedKey,
  type HandedOutRow,
  type KeyGap,
} from '../../db/derived-address-repo.js';
import { findWalletKeys } from '../../db/store-repo.js';
import type { Environment } from '../../domain/environment.js';
import { maxIndex, receiveBranch } from '../../domain/hd/derive.js';
import { deriveAddress, receiveAddress } from '../../rails/chain/derive-address.js';
import { nextTurn } from '../../rails/chain/event-loop.js';

/**
 * Which receive-branch addresses the transfer.confirmed watcher matches (the watch policy,
 * rails/chain/README.md): every index POST /v1/wallets/derive handed out, plus the `derivedGap`
 * indexes after the store's highest, for the key registered now. The watchers only read rows.
 * A derive records its own index (and raises the highest) in one statement on the request path
 * (`recordDerive`); the gap after the highest is written just after the answer, off the request
 * path (`scheduleGapFill`), and again by any later fill if that one was lost (a crash): the
 * worker's start sweep and each process's first derive of a store look for incomplete gaps.
 */
export const derivedGap = 20;

/** Marks from before per-index rows are backfilled from index 0 up to this many indexes. */
export const legacyBackfillBound = 10_000;

export type HandedOut = HandedOutRow;

/**
 * Writes the missing gap rows after the store's highest index for each registered key, and drops
 * gap rows the highest has passed. Idempotent: what exists is not derived again. Derives at most
 * `derivedGap` addresses per key, with a turn of the event loop between them.
 */
export async function fillGaps(db: CommonQueryMethods, storeId: string, env: Environment): Promise<number> {
  let derived = 0;
  for (const gap of await findGaps(db, storeId, env, derivedGap)) derived += await fillGap(db, gap);
  return derived;
}

async function fillGap(db: CommonQueryMethods, { key: k, highest, present }: KeyGap): Promise<number> {
  const have = new Set(present);
  const missing: DerivedAddress[] = [];
  for (let i = highest + 1; i <= Math.min(highest + derivedGap, maxIndex); i++) {
    if (have.has(i)) continue;
    missing.push({ index: i, address: receiveAddress(k.publicKey, k.family, i) });
    await nextTurn();
  }
  // One statement per key: the last gap index has a row exactly when the whole gap does (findIncompleteGaps).
  await insertDerivedAddresses(db, k, missing, false);
  // Gap rows the highest has passed are no longer watched (the highest itself and handed-out rows stay).
  await pruneGap(db, k, highest);
  return missing.length;
}

/**
 * Gap fills waiting to run in this process, one per (store, environment): a burst of derives
 * that raise one store's highest makes one fill, for the highest it finds when it runs.
 */
const waiting = new Map<string, { db: CommonQueryMethods; storeId: string; env: Environment; onError: (err: unknown) => void }>();
let running: Promise<void> | null = null;

/** Fills the store's gap soon, after the current request's answer; failures go to `onError` (the next fill covers them). */
export function scheduleGapFill(db: CommonQueryMethods, storeId: string, env: Environment, onError: (err: unknown) => void): void {
  waiting.set(`${storeId}\u0000${env}`, { db, storeId, env, onError });
  running ??= drain().finally(() => {
    running = null;
  });
}

async function drain(): Promise<void> {
  await nextTurn();
  for (const [id, job] of waiting) {
    waiting.delete(id);
    try {
      await fillGaps(job.db, job.storeId, job.env);
    } catch (err) {
      job.onError(err);
    }
  }
}

/** Resolves once no gap fill is waiting or running in this process (tests, and a graceful stop). */
export async function gapFillsSettled(): Promise<void> {
  while (running) await running;
}

/**
 * At worker start: fills every incomplete gap (a fill lost to a crash between a derive's answer
 * and its fill, or a key registered since the last derive). Answers how many stores it filled.
 */
export async function fillIncompleteGaps(db: CommonQueryMethods): Promise<number> {
  const stores = await findIncompleteGaps(db, derivedGap, maxIndex);
  for (const s of stores) await fillGaps(db, s.storeId, s.environment);
  return stores.length;
}

/**
 * What a derive records, in one call that returns once the rows are written: the index handed
 * out for each key registered now, the highest raised, and the gap after it filled (tests and
 * tools; the route answers before its gap is filled).
 */
export async function recordHandedOut(db: CommonQueryMethods, storeId: string, env: Environment, index: number): Promise<DeriveRecord> {
  const keys = await findWalletKeys(db, storeId, env);
  const handed: HandedOut[] = [];
  for (const family of ['tron', 'evm'] as const) {
    const publicKey = keys[family];
    if (publicKey) handed.push({ family, publicKey, address: receiveAddress(publicKey, family, index) });
  }
  const record = await recordDerive(db, storeId, env, index, handed);
  if (record.matched) await fillGaps(db, storeId, env);
  return record;
}

/**
 * The indexes a mark from before per-index rows stands for: 0 … min(highest, bound − 1) and the
 * highest (all taken as handed out, since which ones were is unknown), then the gap.
 */
export function legacyIndexes(highest: number, bound: number): { handedOut: number[]; gap: number[] } {
  const handedOut = Array.from({ length: Math.min(highest + 1, bound) }, (_, i) => i);
  if (highest >= bound) handedOut.push(highest);
  const gap: number[] = [];
  for (let i = highest + 1; i <= Math.min(highest + derivedGap, maxIndex); i++) gap.push(i);
  return { handedOut, gap };
}

/**
 * Writes the rows of marks made before per-index rows existed (migration 0011), once, for the
 * keys registered now, and answers how many marks it completed. The worker runs it at start
 * before it serves chain watchers, so a watcher resuming from its cursor already matches those
 * addresses. Addresses are derived in batches with a turn of the event loop between them. Safe
 * to repeat and to run in two processes.
 */
export async function backfillLegacyDerivedAddresses(
  db: CommonQueryMethods,
  opts: { bound?: number; batchSize?: number } = {},
): Promise<number> {
  const { bound = legacyBackfillBound, batchSize = 200 } = opts;
  let done = 0;
  for (const m of await findPendingBackfills(db)) {
    const keys = await findWalletKeys(db, m.store_id, m.environment);
    const { handedOut, gap } = legacyIndexes(m.highest_index, bound);
    for (const family of ['tron', 'evm'] as const) {
      const publicKey = keys[family];
      if (!publicKey) continue;
      const k: DerivedKey = { storeId: m.store_id, environment: m.environment, family, publicKey };
      for (const [indexes, isHandedOut] of [[handedOut, true], [gap, false]] as const) {
        for (let at = 0; at < indexes.length; at += batchSize) {
          const rows = indexes.slice(at, at + batchSize).map((index) => ({ index, address: deriveAddress(publicKey, family, receiveBranch, index) }));
          await insertDerivedAddresses(db, k, rows, isHandedOut);
          await nextTurn();
        }
      }
    }
    await finishBackfill(db, m.store_id, m.environment);
    done++;
  }
  return done;
}
