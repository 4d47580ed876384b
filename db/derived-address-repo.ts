import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * Receive-branch addresses the transfer.confirmed watcher matches (`derived_addresses`): every
 * index derive handed out, plus the gap after the store's highest. The rules about which rows
 * exist live in api/services/derived-addresses.ts; the watch set reads them (db/watch-repo.ts).
 */
export type DerivedFamily = 'tron' | 'evm';

export interface DerivedKey {
  storeId: string;
  environment: Environment;
  family: DerivedFamily;
  publicKey: string;
}

export interface DerivedAddress {
  index: number;
  address: string;
}

/**
 * Records that `index` was handed out. A gap row of that index becomes a handed-out one (the
 * conflict arm covers a gap row committed between the two statements). Most derive calls repeat
 * an index: then neither statement writes, so no row is locked and no transaction id is taken
 * (the INSERT only evaluates its row, and its created_xid, when none exists).
 */
export async function markHandedOut(db: CommonQueryMethods, k: DerivedKey, a: DerivedAddress): Promise<void> {
  const match = sql.fragment`store_id = ${k.storeId} AND environment = ${k.environment} AND family = ${k.family}
    AND public_key = ${k.publicKey} AND derived_index = ${a.index}`;
  await db.query(sql.unsafe`UPDATE derived_addresses SET handed_out = true WHERE ${match} AND NOT handed_out`);
  await db.query(sql.unsafe`
    INSERT INTO derived_addresses (store_id, environment, family, public_key, derived_index, address, handed_out)
    SELECT ${k.storeId}, ${k.environment}, ${k.family}, ${k.publicKey}, ${a.index}, ${a.address}, true
    WHERE NOT EXISTS (SELECT 1 FROM derived_addresses WHERE ${match})
    ON CONFLICT (store_id, environment, family, public_key, derived_index) DO UPDATE SET handed_out = true
      WHERE NOT derived_addresses.handed_out`);
}

/** Adds rows that do not exist yet; an existing gap row becomes handed out when these are. */
export async function insertDerivedAddresses(db: CommonQueryMethods, k: DerivedKey, rows: readonly DerivedAddress[], handedOut: boolean): Promise<void> {
  if (rows.length === 0) return;
  await db.query(sql.unsafe`
    INSERT INTO derived_addresses (store_id, environment, family, public_key, derived_index, address, handed_out)
    SELECT ${k.storeId}, ${k.environment}, ${k.family}, ${k.publicKey}, i, a, ${handedOut}
    FROM unnest(${sql.array(rows.map((r) => r.index), 'int4')}::int4[], ${sql.array(rows.map((r) => r.address), 'text')}::text[]) AS t(i, a)
    ON CONFLICT (store_id, environment, family, public_key, derived_index) DO UPDATE SET handed_out = true
      WHERE EXCLUDED.handed_out AND NOT derived_addresses.handed_out`);
}

const gapRow = z.object({ highest_index: z.number(), present: z.array(z.number()) });

/** The store's highest derived index and which of the `gap` indexes after it have rows for this key. */
export async function findGap(db: CommonQueryMethods, k: DerivedKey, gap: number): Promise<{ highest: number; present: number[] } | null> {
  const row = await db.maybeOne(sql.type(gapRow)`
    SELECT m.highest_index, coalesce((SELECT array_agg(d.derived_index) FROM derived_addresses d
      WHERE d.store_id = m.store_id AND d.environment = m.environment AND d.family = ${k.family} AND d.public_key = ${k.publicKey}
        AND d.derived_index > m.highest_index AND d.derived_index <= m.highest_index::bigint + ${gap}), '{}') AS present
    FROM derived_index_marks m WHERE m.store_id = ${k.storeId} AND m.environment = ${k.environment}`);
  return row ? { highest: row.highest_index, present: row.present } : null;
}

/**
 * Drops gap rows that are no longer after the highest index (it rose past them). A concurrent
 * derive that hands one of them out either committed first (the row is handed out and stays) or
 * waits for this delete and inserts it anew.
 */
export async function pruneGap(db: CommonQueryMethods, k: DerivedKey, highest: number): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM derived_addresses WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND family = ${k.family}
      AND public_key = ${k.publicKey} AND NOT handed_out AND derived_index <= ${highest}`);
}

const pendingRow = z.object({ store_id: z.string(), environment: z.enum(['test', 'live']), highest_index: z.number() });

/** Marks written before derived_addresses existed, whose rows the worker still has to write. */
export async function findPendingBackfills(db: CommonQueryMethods): Promise<z.infer<typeof pendingRow>[]> {
  return [...(await db.any(sql.type(pendingRow)`
    SELECT store_id, environment, highest_index FROM derived_index_marks WHERE backfill_pending ORDER BY store_id, environment`))];
}

export async function finishBackfill(db: CommonQueryMethods, storeId: string, env: Environment): Promise<void> {
  await db.query(sql.unsafe`UPDATE derived_index_marks SET backfill_pending = false WHERE store_id = ${storeId} AND environment = ${env}`);
}
