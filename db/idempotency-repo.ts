import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

const ttl = sql.fragment`interval '24 hours'`;

const row = z.object({ request_hash: z.string(), status_code: z.number().nullable(), response_body: z.any(), fresh: z.boolean() });

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

/**
 * Claims an Idempotency-Key for a request. The first request inserts a placeholder and runs;
 * later ones replay its stored answer, or are told the key is busy or was used for another body.
 * Keys older than 24 hours are forgotten.
 */
export async function claimIdempotencyKey(
  pool: DatabasePool,
  k: { storeId: string; environment: string; key: string; requestHash: string; method: string; path: string },
): Promise<Claim> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`DELETE FROM idempotency_keys
      WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key} AND created_at < now() - ${ttl}`);
    const inserted = await tx.query(sql.unsafe`
      INSERT INTO idempotency_keys (store_id, environment, key, request_hash, method, path)
      VALUES (${k.storeId}, ${k.environment}, ${k.key}, ${k.requestHash}, ${k.method}, ${k.path})
      ON CONFLICT DO NOTHING`);
    if (inserted.rowCount === 1) return { kind: 'claimed' } as const;
    const existing = await tx.one(sql.type(row)`
      SELECT request_hash, status_code, response_body, created_at > now() - ${ttl} AS fresh FROM idempotency_keys
      WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key}`);
    if (existing.request_hash !== k.requestHash) return { kind: 'mismatch' } as const;
    if (existing.status_code === null) return { kind: 'in_progress' } as const;
    return { kind: 'replay', status: existing.status_code, body: existing.response_body } as const;
  });
}

export async function completeIdempotencyKey(
  pool: DatabasePool,
  k: { storeId: string; environment: string; key: string },
  status: number,
  body: unknown,
): Promise<void> {
  await pool.query(sql.unsafe`UPDATE idempotency_keys SET status_code = ${status}, response_body = ${sql.jsonb(body as never)}
    WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key}`);
}

/** A failed attempt (5xx, or a crash) releases the key so the client's retry can run. */
export async function releaseIdempotencyKey(pool: DatabasePool, k: { storeId: string; environment: string; key: string }): Promise<void> {
  await pool.query(sql.unsafe`DELETE FROM idempotency_keys
    WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key} AND status_code IS NULL`);
}

export interface StoredKey {
  storeId: string;
  environment: string;
  key: string;
}

/**
 * Records whose stored response has a top-level `marker` (encrypted secret fields), for
 * `credentials:reencrypt`; `fresh` is false once past the 24 hours (nothing replays them).
 */
export async function listMarkedResponses(pool: DatabasePool, marker: string): Promise<readonly (StoredKey & { fresh: boolean })[]> {
  const rows = await pool.any(sql.type(z.object({ store_id: z.string(), environment: z.string(), key: z.string(), fresh: z.boolean() }))`
    SELECT store_id, environment, key, created_at > now() - ${ttl} AS fresh FROM idempotency_keys
    WHERE jsonb_typeof(response_body) = 'object' AND response_body -> ${marker} IS NOT NULL ORDER BY created_at`);
  return rows.map((r) => ({ storeId: r.store_id, environment: r.environment, key: r.key, fresh: r.fresh }));
}

/** Rewrites one stored response under a row lock; `rewrite` returns null to leave it alone. */
export async function rewriteStoredResponse(pool: DatabasePool, k: StoredKey, rewrite: (body: unknown) => unknown | null): Promise<void> {
  await pool.transaction(async (tx) => {
    const body = await tx.maybeOneFirst(sql.type(z.object({ response_body: z.any() }))`
      SELECT response_body FROM idempotency_keys
      WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key} FOR UPDATE`);
    const next = body === null ? null : rewrite(body);
    if (next === null) return;
    await tx.query(sql.unsafe`UPDATE idempotency_keys SET response_body = ${sql.jsonb(next as never)}
      WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key}`);
  });
}

/** An expired record, forgotten now rather than at the key's next use. */
export async function deleteExpiredKey(pool: DatabasePool, k: StoredKey): Promise<void> {
  await pool.query(sql.unsafe`DELETE FROM idempotency_keys
    WHERE store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key} AND created_at <= now() - ${ttl}`);
}
