import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { environments, type Environment } from '../domain/environment.js';
import { keyIsActive } from './api-key-repo.js';

/**
 * Dashboard sessions, looked up by the SHA-256 of the cookie token. A session is active while it
 * is unexpired, unrevoked, and the secret key that opened it still authenticates (unrevoked, and
 * not past the grace period of a roll).
 */
export interface ActiveDashboardSession {
  storeId: string;
  storeName: string;
  environment: Environment;
  keyId: string;
  expiresAt: string;
}

const activeRow = z.object({
  store_id: z.string(),
  store_name: z.string(),
  environment: z.enum(environments),
  key_id: z.string(),
  expires_at: z.string(),
});

export async function insertDashboardSession(
  pool: DatabasePool,
  s: { tokenHash: Buffer; storeId: string; environment: Environment; keyId: string; lifetimeSeconds: number },
): Promise<void> {
  await pool.query(sql.unsafe`
    INSERT INTO dashboard_sessions (token_hash, store_id, environment, key_id, expires_at)
    VALUES (${sql.binary(s.tokenHash)}, ${s.storeId}, ${s.environment}, ${s.keyId}, now() + ${s.lifetimeSeconds} * interval '1 second')`);
}

export async function findActiveDashboardSession(pool: DatabasePool, tokenHash: Buffer): Promise<ActiveDashboardSession | null> {
  const row = await pool.maybeOne(sql.type(activeRow)`
    SELECT s.store_id, st.name AS store_name, s.environment, s.key_id, s.expires_at
    FROM dashboard_sessions s
    JOIN api_keys k ON k.id = s.key_id
    JOIN stores st ON st.id = s.store_id
    WHERE s.token_hash = ${sql.binary(tokenHash)}
      AND s.revoked_at IS NULL AND s.expires_at > now() AND ${keyIsActive('k')}`);
  if (!row) return null;
  return { storeId: row.store_id, storeName: row.store_name, environment: row.environment, keyId: row.key_id, expiresAt: row.expires_at };
}

/** Sign-out. Revoking twice is harmless; the answer says whether a live session was ended. */
export async function revokeDashboardSession(pool: DatabasePool, tokenHash: Buffer): Promise<boolean> {
  const result = await pool.query(sql.unsafe`
    UPDATE dashboard_sessions SET revoked_at = now() WHERE token_hash = ${sql.binary(tokenHash)} AND revoked_at IS NULL`);
  return result.rowCount > 0;
}

/** Housekeeping at sign-in: rows long past their expiry serve no one. */
export async function deleteStaleDashboardSessions(pool: DatabasePool, olderThanDays: number): Promise<void> {
  await pool.query(sql.unsafe`DELETE FROM dashboard_sessions WHERE expires_at < now() - ${olderThanDays} * interval '1 day'`);
}
