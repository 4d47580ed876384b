import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/** Stored sweep plans (migration 0033, docs/treasury.md); a plan expires `lifetimeSeconds` after it is made, by the database's clock. */
const planRow = z.object({ id: z.string(), created_at: z.string(), expires_at: z.string() });

export async function insertSweepPlan(
  db: CommonQueryMethods,
  p: { id: string; storeId: string; environment: Environment; rail: string; destination: string; plan: unknown; lifetimeSeconds: number },
): Promise<{ id: string; createdAt: string; expiresAt: string }> {
  const row = await db.one(sql.type(planRow)`
    INSERT INTO sweep_plans (id, store_id, environment, rail, destination, plan, expires_at)
    VALUES (${p.id}, ${p.storeId}, ${p.environment}, ${p.rail}, ${p.destination}, ${sql.jsonb(p.plan as never)}, now() + make_interval(secs => ${p.lifetimeSeconds}))
    RETURNING id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
      to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at`);
  return { id: row.id, createdAt: row.created_at, expiresAt: row.expires_at };
}

const storedRow = z.object({ id: z.string(), rail: z.string(), destination: z.string(), plan: z.any(), expired: z.boolean(), broadcast: z.boolean() });
export type StoredSweepPlan = z.infer<typeof storedRow>;

export async function findSweepPlan(db: CommonQueryMethods, storeId: string, environment: Environment, id: string): Promise<StoredSweepPlan | null> {
  return db.maybeOne(sql.type(storedRow)`
    SELECT id, rail, destination, plan, expires_at <= now() AS expired, broadcast_at IS NOT NULL AS broadcast FROM sweep_plans
    WHERE id = ${id} AND store_id = ${storeId} AND environment = ${environment}`);
}

/** Marks the plan as being broadcast; false when it already was, or has expired (one statement: two racing broadcasts cannot both win). */
export async function claimSweepBroadcast(db: CommonQueryMethods, storeId: string, environment: Environment, id: string): Promise<boolean> {
  const row = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    UPDATE sweep_plans SET broadcast_at = now(), state = 'broadcast'
    WHERE id = ${id} AND store_id = ${storeId} AND environment = ${environment} AND broadcast_at IS NULL AND expires_at > now() RETURNING id`);
  return row !== null;
}
