import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * The per-store allowlist of sweep destinations (migration 0033, docs/treasury.md): written only
 * by the dashboard's owner actions; a destination is usable from `usable_at`, which the
 * database's clock sets at creation (its `now()` plus the delay), so no clock of a process decides.
 */
const destinationRow = z.object({
  id: z.string(),
  rail: z.string(),
  address: z.string(),
  label: z.string(),
  added_by: z.string(),
  created_at: z.string(),
  usable_at: z.string(),
  usable: z.boolean(),
});
export type DestinationRow = z.infer<typeof destinationRow>;

const columns = sql.fragment`id, rail, address, label, added_by, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  to_char(usable_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS usable_at, usable_at <= now() AS usable`;

/** Adds a destination; null when the same address is already on the rail's list (nothing written). */
export async function insertDestination(
  db: CommonQueryMethods,
  d: { id: string; storeId: string; environment: Environment; rail: string; address: string; label: string; addedBy: string; delaySeconds: number },
): Promise<DestinationRow | null> {
  return db.maybeOne(sql.type(destinationRow)`
    INSERT INTO sweep_destinations (id, store_id, environment, rail, address, label, added_by, usable_at)
    VALUES (${d.id}, ${d.storeId}, ${d.environment}, ${d.rail}, ${d.address}, ${d.label}, ${d.addedBy}, now() + make_interval(secs => ${d.delaySeconds}))
    ON CONFLICT (store_id, environment, rail, address) WHERE removed_at IS NULL DO NOTHING
    RETURNING ${columns}`);
}

/** The scope's destinations not removed, oldest first. */
export async function listDestinations(db: CommonQueryMethods, storeId: string, environment: Environment): Promise<readonly DestinationRow[]> {
  return db.any(sql.type(destinationRow)`
    SELECT ${columns} FROM sweep_destinations
    WHERE store_id = ${storeId} AND environment = ${environment} AND removed_at IS NULL ORDER BY created_at, id`);
}

/** Removes a destination of the scope; false when there is none by that id. */
export async function removeDestination(db: CommonQueryMethods, storeId: string, environment: Environment, id: string, removedBy: string): Promise<boolean> {
  const row = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    UPDATE sweep_destinations SET removed_at = now(), removed_by = ${removedBy}
    WHERE id = ${id} AND store_id = ${storeId} AND environment = ${environment} AND removed_at IS NULL RETURNING id`);
  return row !== null;
}

/** The scope's active destination of `rail` at `address` (ledger form), usable or not yet; null when not on the list. */
export async function findDestination(db: CommonQueryMethods, storeId: string, environment: Environment, rail: string, address: string): Promise<DestinationRow | null> {
  return db.maybeOne(sql.type(destinationRow)`
    SELECT ${columns} FROM sweep_destinations
    WHERE store_id = ${storeId} AND environment = ${environment} AND rail = ${rail} AND address = ${address} AND removed_at IS NULL`);
}
