import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { environments, type Environment } from '../domain/environment.js';
import { roles, type Role } from '../domain/roles.js';

/**
 * Dashboard sessions, looked up by the SHA-256 of the cookie token. A session belongs to a person
 * and looks at one store in one environment. It is active while it is unexpired, unrevoked, and
 * its person is still a member of that store (the role is read on every request, so a changed
 * role or a removed member takes effect on the next page).
 */
export interface ActiveDashboardSession {
  userId: string;
  email: string;
  storeId: string;
  storeName: string;
  environment: Environment;
  role: Role;
  expiresAt: string;
  /** Every store the person belongs to, for the switcher: read in the same statement. */
  stores: { storeId: string; storeName: string; role: Role }[];
}

const activeRow = z.object({
  user_id: z.string(),
  email: z.string(),
  store_id: z.string(),
  store_name: z.string(),
  environment: z.enum(environments),
  role: z.enum(roles),
  expires_at: z.string(),
  stores: z.array(z.object({ storeId: z.string(), storeName: z.string(), role: z.enum(roles) })),
});

export async function insertDashboardSession(
  pool: DatabasePool,
  s: { tokenHash: Buffer; userId: string; storeId: string; environment: Environment; lifetimeSeconds: number },
): Promise<void> {
  await pool.query(sql.unsafe`
    INSERT INTO dashboard_sessions (token_hash, user_id, store_id, environment, expires_at)
    VALUES (${sql.binary(s.tokenHash)}, ${s.userId}, ${s.storeId}, ${s.environment}, now() + ${s.lifetimeSeconds} * interval '1 second')`);
}

export async function findActiveDashboardSession(pool: DatabasePool, tokenHash: Buffer): Promise<ActiveDashboardSession | null> {
  const row = await pool.maybeOne(sql.type(activeRow)`
    SELECT s.user_id, u.email, s.store_id, st.name AS store_name, s.environment, m.role, s.expires_at,
      (SELECT json_agg(json_build_object('storeId', m2.store_id, 'storeName', s2.name, 'role', m2.role) ORDER BY m2.created_at, m2.store_id)
       FROM store_members m2 JOIN stores s2 ON s2.id = m2.store_id WHERE m2.user_id = s.user_id) AS stores
    FROM dashboard_sessions s
    JOIN dashboard_users u ON u.id = s.user_id
    JOIN store_members m ON m.store_id = s.store_id AND m.user_id = s.user_id
    JOIN stores st ON st.id = s.store_id
    WHERE s.token_hash = ${sql.binary(tokenHash)} AND s.revoked_at IS NULL AND s.expires_at > now()`);
  if (!row) return null;
  return {
    userId: row.user_id, email: row.email, storeId: row.store_id, storeName: row.store_name,
    environment: row.environment, role: row.role, expiresAt: row.expires_at, stores: row.stores,
  };
}

/** Points a live session at another store (one its person is a member of) or environment. */
export async function moveDashboardSession(pool: DatabasePool, tokenHash: Buffer, to: { storeId: string; environment: Environment }): Promise<boolean> {
  const result = await pool.query(sql.unsafe`
    UPDATE dashboard_sessions s SET store_id = ${to.storeId}, environment = ${to.environment}
    WHERE s.token_hash = ${sql.binary(tokenHash)} AND s.revoked_at IS NULL AND s.expires_at > now()
      AND EXISTS (SELECT 1 FROM store_members m WHERE m.store_id = ${to.storeId} AND m.user_id = s.user_id)`);
  return result.rowCount > 0;
}

/** Sign-out. Revoking twice is harmless; the answer says whether a live session was ended. */
export async function revokeDashboardSession(pool: DatabasePool, tokenHash: Buffer): Promise<boolean> {
  const result = await pool.query(sql.unsafe`
    UPDATE dashboard_sessions SET revoked_at = now() WHERE token_hash = ${sql.binary(tokenHash)} AND revoked_at IS NULL`);
  return result.rowCount > 0;
}

/** Sign-out everywhere (and after a password change): every live session of the person but `keep`. */
export async function revokeUserSessions(db: CommonQueryMethods, userId: string, keep?: Buffer): Promise<number> {
  const result = await db.query(sql.unsafe`
    UPDATE dashboard_sessions SET revoked_at = now()
    WHERE user_id = ${userId} AND revoked_at IS NULL
      ${keep ? sql.fragment`AND token_hash <> ${sql.binary(keep)}` : sql.fragment``}`);
  return result.rowCount;
}

/** Housekeeping at sign-in: rows long past their expiry serve no one. */
export async function deleteStaleDashboardSessions(pool: DatabasePool, olderThanDays: number): Promise<void> {
  await pool.query(sql.unsafe`DELETE FROM dashboard_sessions WHERE expires_at < now() - ${olderThanDays} * interval '1 day'`);
}
