import type { CommonQueryMethods } from 'slonik';
import {
  findGap,
  findPendingBackfills,
  finishBackfill,
  insertDerivedAddresses,
  markHandedOut,
  pruneGap,
  type DerivedAddress,
  type DerivedFamily,
  type DerivedKey,
} from '../../db/derived-address-repo.js';
import { findWalletKeys } from '../../db/store-repo.js';
import { raiseHighestDerivedIndex } from '../../db/wallet-repo.js';
import type { Environment } from '../../domain/environment.js';
import { maxIndex, receiveBranch } from '../../domain/hd/derive.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';

/**
 * Which receive-branch addresses the transfer.confirmed watcher matches (the watch policy,
 * activities/chains/README.md): every index POST /v1/wallets/derive handed out, plus the
 * `derivedGap` indexes after the store's highest, for the key registered now. Rows are written
 * here, where the addresses are derived anyway; the watchers only read them. So watching costs
 * one row per index handed out (plus the gap), whatever the indexes' values.
 */
export const derivedGap = 20;

/** Marks from before per-index rows are backfilled from index 0 up to this many indexes. */
export const legacyBackfillBound = 10_000;

export interface HandedOut {
  family: DerivedFamily;
  publicKey: string;
  address: string;
}

/**
 * Records that derive handed out `index` for each registered key: its address, the store's
 * highest index, and the gap after the highest. Only missing gap rows are derived, so a call
 * derives at most `derivedGap` addresses per family, and a repeated index none.
 */
export async function recordHandedOut(db: CommonQueryMethods, storeId: string, env: Environment, index: number, handed: readonly HandedOut[]): Promise<void> {
  const keyOf = (h: HandedOut): DerivedKey => ({ storeId, environment: env, family: h.family, publicKey: h.publicKey });
  // The index's row first, then the mark: whatever highest a reader sees has its row already.
  for (const h of handed) await markHandedOut(db, keyOf(h), { index, address: h.address });
  await raiseHighestDerivedIndex(db, storeId, env, index);
  for (const h of handed) await fillGap(db, keyOf(h));
}

async function fillGap(db: CommonQueryMethods, k: DerivedKey): Promise<void> {
  const gap = await findGap(db, k, derivedGap);
  if (!gap) return;
  const present = new Set(gap.present);
  const missing: DerivedAddress[] = [];
  for (let i = gap.highest + 1; i <= Math.min(gap.highest + derivedGap, maxIndex); i++) {
    if (!present.has(i)) missing.push({ index: i, address: deriveAddress(k.publicKey, k.family, receiveBranch, i) });
  }
  await insertDerivedAddresses(db, k, missing, false);
  // Gap rows the highest has passed are no longer watched (the highest itself and handed-out rows stay).
  await pruneGap(db, k, gap.highest);
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

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

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
