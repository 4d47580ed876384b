import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * The reads of the chain watchers' in-memory watch set (rails/chain/watch-set.ts): link and
 * invoice addresses (`watched_addresses`) and receive addresses of the stores' current keys
 * (`derived_addresses`), in pages, all of them or those written since a transaction id.
 */
export type WatchFamily = 'tron' | 'evm' | 'sol_ref';

/**
 * The xmin of this statement's snapshot: every transaction below it had ended when the snapshot
 * was taken, so a row this or any later statement cannot see was written at or above it.
 */
export async function snapshotXmin(db: CommonQueryMethods): Promise<string> {
  return db.oneFirst(sql.type(z.object({ xmin: z.string() }))`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin`);
}

const watchedRow = z.object({
  address: z.string(),
  owner_kind: z.enum(['payment_link', 'invoice']),
  owner_id: z.string(),
  store_id: z.string(),
  watch_until: z.string(),
});
export type WatchedRow = z.infer<typeof watchedRow>;

/** One page of link and invoice addresses, by address; `sinceXid` null reads them all. */
export async function watchedAddressPage(
  db: CommonQueryMethods,
  q: { family: WatchFamily; env: Environment; sinceXid: string | null; after: string | null; limit: number },
): Promise<readonly WatchedRow[]> {
  const since = q.sinceXid === null ? sql.fragment`` : sql.fragment`AND created_xid >= ${q.sinceXid}::xid8`;
  const after = q.after === null ? sql.fragment`` : sql.fragment`AND address > ${q.after}`;
  return db.any(sql.type(watchedRow)`
    SELECT address, owner_kind, owner_id, store_id, watch_until FROM watched_addresses
    WHERE family = ${q.family} AND environment = ${q.env} ${since} ${after}
    ORDER BY address LIMIT ${q.limit}`);
}

const derivedRow = z.object({ address: z.string(), store_id: z.string(), derived_index: z.number() });
export type DerivedRow = z.infer<typeof derivedRow>;

/** Which derived rows a page reads: all, those written since a transaction id, or those of some stores. */
export type DerivedFilter = { all: true } | { sinceXid: string } | { storeIds: readonly string[] };

/**
 * One page of receive addresses whose key is the store's registered key of the family now (a
 * replaced or disconnected key's rows are not read), by (store, index).
 */
export async function derivedAddressPage(
  db: CommonQueryMethods,
  q: { family: 'tron' | 'evm'; env: Environment; filter: DerivedFilter; after: { storeId: string; index: number } | null; limit: number },
): Promise<readonly DerivedRow[]> {
  const f = q.filter;
  const filter =
    'sinceXid' in f ? sql.fragment`AND d.created_xid >= ${f.sinceXid}::xid8`
    : 'storeIds' in f ? sql.fragment`AND d.store_id = ANY(${sql.array(f.storeIds, 'text')})`
    : sql.fragment``;
  const after = q.after === null ? sql.fragment`` : sql.fragment`AND (d.store_id, d.derived_index) > (${q.after.storeId}, ${q.after.index})`;
  return db.any(sql.type(derivedRow)`
    SELECT d.address, d.store_id, d.derived_index FROM derived_addresses d
    JOIN store_wallets w ON w.store_id = d.store_id AND w.environment = d.environment AND w.kind = d.family AND w.public_key = d.public_key
    WHERE d.family = ${q.family} AND d.environment = ${q.env} ${filter} ${after}
    ORDER BY d.store_id, d.derived_index LIMIT ${q.limit}`);
}

/** Stores whose key of the family was registered or replaced at or after `sinceXid`. */
export async function storesWithKeyChangedSince(db: CommonQueryMethods, kind: 'tron' | 'evm', env: Environment, sinceXid: string): Promise<string[]> {
  const rows = await db.anyFirst(sql.type(z.object({ store_id: z.string() }))`
    SELECT store_id FROM store_wallets WHERE kind = ${kind} AND environment = ${env} AND changed_xid >= ${sinceXid}::xid8`);
  return [...rows];
}

const demandRow = z.object({ environment: z.enum(['test', 'live']), rail: z.string() });

/**
 * The (environment, rail) pairs open work needs watched: links and invoices still inside their
 * watch window, and stores with derived receive addresses (watched on TRON and BSC).
 */
export async function railsWithOpenWork(db: CommonQueryMethods): Promise<ReadonlyArray<{ environment: 'test' | 'live'; rail: string }>> {
  return db.any(sql.type(demandRow)`
    SELECT DISTINCT l.environment, unnest(l.enabled_rails) AS rail FROM payment_links l
    WHERE EXISTS (SELECT 1 FROM watched_addresses w WHERE w.owner_id = l.id AND w.watch_until > now())
    UNION
    SELECT DISTINCT m.environment, CASE w.kind WHEN 'tron' THEN 'USDT_TRON' ELSE 'USDT_BSC' END AS rail
    FROM derived_index_marks m JOIN store_wallets w ON w.store_id = m.store_id AND w.environment = m.environment AND w.kind IN ('tron', 'evm')`);
}
