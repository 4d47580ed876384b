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

export interface HandedOutRow {
  family: DerivedFamily;
  publicKey: string;
  address: string;
}

const recordRow = z.object({ matched: z.boolean(), keys: z.array(z.object({ kind: z.enum(['tron', 'evm']), public_key: z.string() })), raised: z.boolean() });

/** What `recordDerive` found: the store's TRON and EVM keys now, and whether it wrote anything. */
export interface DeriveRecord {
  /** The rows given were derived from exactly the keys registered now, so they were recorded. */
  matched: boolean;
  keys: { tron: string | null; evm: string | null };
  /** This derive raised (or created) the store's highest index: the gap after it needs filling. */
  raised: boolean;
}

/**
 * What one derive records, in one statement: `index` handed out for each given key (a gap row of
 * that index becomes a handed-out one) and the store's highest index raised to it, but only when
 * the given keys are exactly the store's registered TRON and EVM keys now (`matched`); otherwise
 * nothing is written and the keys now are answered, so a caller that derived from stale keys
 * derives again. The gap after the highest is not written here (derived-addresses.ts fills it).
 *
 * A repeated index writes nothing: its handed-out rows are in the snapshot, so the INSERTs produce
 * no row and the UPDATE matches none; nothing is locked and no transaction id is taken (an INSERT
 * evaluates its row, and its created_xid, only when it has one). A gap row of the index becomes
 * handed out through the conflict arm, not through an UPDATE filtered on the snapshot: a gap row
 * that a concurrent fill's prune deletes meanwhile (the highest passed it) makes the insert wait
 * for that delete and then insert the row anew, so a handed-out index always keeps its row. Two
 * first derives that race keep the greater highest; under READ COMMITTED a concurrent raise makes
 * the mark's UPDATE re-check its WHERE against the newer row, so no raise is lost.
 */
export async function recordDerive(db: CommonQueryMethods, storeId: string, env: Environment, index: number, handed: readonly HandedOutRow[]): Promise<DeriveRecord> {
  return recordDerives(db, storeId, env, [{ index, handed }]);
}

/** One derive of `recordDerives`: the index and the addresses derived at it. */
export interface DeriveAt {
  index: number;
  handed: readonly HandedOutRow[];
}

/**
 * `recordDerive` for several derives of one store at once, in the same one statement: every
 * index handed out for each given key, and the highest raised to the greatest of them, all only
 * when the given keys (the same for every derive here) are exactly the store's keys now. A
 * batch of derives that raced each other commits once instead of once each.
 */
export async function recordDerives(db: CommonQueryMethods, storeId: string, env: Environment, derives: readonly DeriveAt[]): Promise<DeriveRecord> {
  const seen = new Set<string>();
  const rows: Array<HandedOutRow & { index: number }> = [];
  for (const d of derives) {
    for (const h of d.handed) {
      // One row per (family, key, index): a statement may not make the same row twice.
      const id = `${h.family}\u0000${h.publicKey}\u0000${d.index}`;
      if (!seen.has(id)) rows.push({ ...h, index: d.index }), seen.add(id);
    }
  }
  // Rows in one order (by family, then index), as the gap fill writes and prunes them: two
  // statements that lock some of the same rows then never wait on each other in a cycle.
  rows.sort((a, b) => (a.family === b.family ? a.index - b.index : a.family < b.family ? -1 : 1));
  const highest = Math.max(...derives.map((d) => d.index));
  const families = sql.array(rows.map((h) => h.family), 'text');
  const keys = sql.array(rows.map((h) => h.publicKey), 'text');
  const addresses = sql.array(rows.map((h) => h.address), 'text');
  const indexes = sql.array(rows.map((h) => h.index), 'int4');
  const row = await db.one(sql.type(recordRow)`
    WITH now_keys AS (
      SELECT kind, public_key FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind IN ('tron', 'evm')
    ), given AS (
      SELECT * FROM unnest(${families}::text[], ${keys}::text[], ${addresses}::text[], ${indexes}::int4[]) AS g(family, public_key, address, derived_index)
    ), given_keys AS (
      SELECT DISTINCT family, public_key FROM given
    ), verdict AS (
      SELECT (SELECT count(*) FROM now_keys) = (SELECT count(*) FROM given_keys) AND (SELECT count(*) FROM given_keys) > 0
        AND NOT EXISTS (SELECT 1 FROM given_keys g WHERE NOT EXISTS (SELECT 1 FROM now_keys k WHERE k.kind = g.family AND k.public_key = g.public_key)) AS matched
    ), inserted AS (
      INSERT INTO derived_addresses (store_id, environment, family, public_key, derived_index, address, handed_out)
      SELECT ${storeId}, ${env}, g.family, g.public_key, g.derived_index, g.address, true FROM given g
      WHERE (SELECT matched FROM verdict) AND NOT EXISTS (SELECT 1 FROM derived_addresses d WHERE d.store_id = ${storeId}
        AND d.environment = ${env} AND d.family = g.family AND d.public_key = g.public_key AND d.derived_index = g.derived_index AND d.handed_out)
      ON CONFLICT (store_id, environment, family, public_key, derived_index) DO UPDATE SET handed_out = true
        WHERE NOT derived_addresses.handed_out
      RETURNING 1
    ), raised AS (
      UPDATE derived_index_marks SET highest_index = ${highest}, updated_at = now()
      WHERE (SELECT matched FROM verdict) AND store_id = ${storeId} AND environment = ${env} AND highest_index < ${highest}
      RETURNING 1
    ), created AS (
      INSERT INTO derived_index_marks (store_id, environment, highest_index)
      SELECT ${storeId}, ${env}, ${highest}
      WHERE (SELECT matched FROM verdict) AND NOT EXISTS (SELECT 1 FROM derived_index_marks WHERE store_id = ${storeId} AND environment = ${env})
      ON CONFLICT (store_id, environment) DO UPDATE
        SET highest_index = GREATEST(derived_index_marks.highest_index, EXCLUDED.highest_index), updated_at = now()
      RETURNING 1
    )
    SELECT (SELECT matched FROM verdict) AS matched,
      coalesce((SELECT json_agg(json_build_object('kind', kind, 'public_key', public_key)) FROM now_keys), '[]'::json) AS keys,
      EXISTS (SELECT 1 FROM raised) OR EXISTS (SELECT 1 FROM created) AS raised`);
  const found = { tron: null as string | null, evm: null as string | null };
  for (const k of row.keys) found[k.kind] = k.public_key;
  return { matched: row.matched, keys: found, raised: row.raised };
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

const gapRow = z.object({ family: z.enum(['tron', 'evm']), public_key: z.string(), highest_index: z.number(), present: z.array(z.number()) });

export interface KeyGap {
  key: DerivedKey;
  highest: number;
  /** Which of the `gap` indexes after the highest have a row for this key. */
  present: number[];
}

/** For each registered TRON and EVM key of the store: its highest index and the gap rows it has. */
export async function findGaps(db: CommonQueryMethods, storeId: string, env: Environment, gap: number): Promise<KeyGap[]> {
  const rows = await db.any(sql.type(gapRow)`
    SELECT w.kind AS family, w.public_key, m.highest_index, coalesce((SELECT array_agg(d.derived_index) FROM derived_addresses d
      WHERE d.store_id = m.store_id AND d.environment = m.environment AND d.family = w.kind AND d.public_key = w.public_key
        AND d.derived_index > m.highest_index AND d.derived_index <= m.highest_index::bigint + ${gap}), '{}') AS present
    FROM derived_index_marks m JOIN store_wallets w ON w.store_id = m.store_id AND w.environment = m.environment AND w.kind IN ('tron', 'evm')
    WHERE m.store_id = ${storeId} AND m.environment = ${env} ORDER BY w.kind`);
  return rows.map((r) => ({ key: { storeId, environment: env, family: r.family, publicKey: r.public_key }, highest: r.highest_index, present: r.present }));
}

const storeEnvRow = z.object({ store_id: z.string(), environment: z.enum(['test', 'live']) });

/**
 * Stores (and environments) whose registered TRON or EVM key has no row at the last index of the
 * gap after the highest (the highest + `gap`, or 2^31 − 1): the gap is written in one statement
 * per key, and nothing else writes above the highest, so that row is missing exactly when the
 * gap is incomplete. Marks still waiting for their legacy backfill are left to it.
 */
export async function findIncompleteGaps(db: CommonQueryMethods, gap: number, maxIndex: number): Promise<Array<{ storeId: string; environment: Environment }>> {
  const rows = await db.any(sql.type(storeEnvRow)`
    SELECT DISTINCT m.store_id, m.environment FROM derived_index_marks m
    JOIN store_wallets w ON w.store_id = m.store_id AND w.environment = m.environment AND w.kind IN ('tron', 'evm')
    WHERE NOT m.backfill_pending AND NOT EXISTS (SELECT 1 FROM derived_addresses d WHERE d.store_id = m.store_id AND d.environment = m.environment
      AND d.family = w.kind AND d.public_key = w.public_key AND d.derived_index = LEAST(m.highest_index::bigint + ${gap}, ${maxIndex}))
    ORDER BY m.store_id, m.environment`);
  return rows.map((r) => ({ storeId: r.store_id, environment: r.environment }));
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
