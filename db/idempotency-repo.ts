import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

const ttl = sql.fragment`interval '24 hours'`;

const row = z.object({
  request_hash: z.string(),
  status_code: z.number().nullable(),
  response_body: z.any(),
  retry_after_ms: z.number().nullable(),
});

export interface KeyScope {
  storeId: string;
  environment: string;
  key: string;
}

/** Ids reserved by a request for the objects it creates, by kind (`paymentLink`, `invoice`, …). */
export type CreatedIds = Record<string, string>;

export type Claim =
  | { kind: 'claimed'; token: string; createdIds: CreatedIds; takenOver: boolean }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch' }
  | { kind: 'in_progress'; retryAfterMs: number };

const where = (k: KeyScope) => sql.fragment`store_id = ${k.storeId} AND environment = ${k.environment} AND key = ${k.key}`;

/**
 * Claims an Idempotency-Key for a request. The first request inserts a claim with a lease of
 * `leaseMs` and runs; later ones replay its recorded answer, are told the key is busy (for as
 * long as the lease runs) or was used for another body. A claim whose lease ran out belongs to
 * an attempt that died: the next request with the same body takes it over, with the ids the dead
 * attempt reserved. Keys older than 24 hours are forgotten.
 */
export async function claimIdempotencyKey(
  pool: DatabasePool,
  k: KeyScope & { requestHash: string; method: string; path: string; leaseMs: number; token: string },
): Promise<Claim> {
  const lease = sql.fragment`now() + make_interval(secs => ${k.leaseMs / 1000})`;
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`DELETE FROM idempotency_keys WHERE ${where(k)} AND created_at < now() - ${ttl}`);
    const inserted = await tx.query(sql.unsafe`
      INSERT INTO idempotency_keys (store_id, environment, key, request_hash, method, path, locked_until, lock_token)
      VALUES (${k.storeId}, ${k.environment}, ${k.key}, ${k.requestHash}, ${k.method}, ${k.path}, ${lease}, ${k.token})
      ON CONFLICT DO NOTHING`);
    if (inserted.rowCount === 1) return { kind: 'claimed', token: k.token, createdIds: {}, takenOver: false } as const;
    const existing = await tx.one(sql.type(row)`
      SELECT request_hash, status_code, response_body,
        CASE WHEN locked_until > now() THEN ceil(extract(epoch FROM locked_until - now()) * 1000)::int END AS retry_after_ms
      FROM idempotency_keys WHERE ${where(k)} FOR UPDATE`);
    if (existing.request_hash !== k.requestHash) return { kind: 'mismatch' } as const;
    if (existing.status_code !== null) return { kind: 'replay', status: existing.status_code, body: existing.response_body } as const;
    if (existing.retry_after_ms !== null) return { kind: 'in_progress', retryAfterMs: existing.retry_after_ms } as const;
    const created = await tx.oneFirst(sql.type(z.object({ created_ids: z.record(z.string()) }))`
      UPDATE idempotency_keys SET lock_token = ${k.token}, locked_until = ${lease}
      WHERE ${where(k)} RETURNING created_ids`);
    return { kind: 'claimed', token: k.token, createdIds: created, takenOver: true } as const;
  });
}

/** Extends the lease of a running claim; false when the claim is no longer this attempt's. */
export async function renewIdempotencyClaim(pool: DatabasePool, k: KeyScope, token: string, leaseMs: number): Promise<boolean> {
  const result = await pool.query(sql.unsafe`UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => ${leaseMs / 1000})
    WHERE ${where(k)} AND lock_token = ${token} AND status_code IS NULL`);
  return result.rowCount === 1;
}

const createdIdRow = z.object({ id: z.string() });

/**
 * Reserves the id of an object the request is about to create, or returns the one an earlier
 * attempt reserved (the first reservation of a kind wins). Null when the claim is no longer
 * this attempt's.
 */
export async function reserveCreatedId(pool: DatabasePool, k: KeyScope, token: string, kind: string, candidate: string): Promise<string | null> {
  return pool.maybeOneFirst(sql.type(createdIdRow)`
    UPDATE idempotency_keys SET created_ids = jsonb_build_object(${kind}::text, ${candidate}::text) || created_ids
    WHERE ${where(k)} AND lock_token = ${token} AND status_code IS NULL
    RETURNING created_ids ->> ${kind} AS id`);
}

/** Records the answer; the first attempt to finish records it, a stalled one changes nothing. */
export async function completeIdempotencyKey(pool: DatabasePool, k: KeyScope, token: string, status: number, body: unknown): Promise<void> {
  await pool.query(sql.unsafe`UPDATE idempotency_keys
    SET status_code = ${status}, response_body = ${sql.jsonb(body as never)}, locked_until = NULL
    WHERE ${where(k)} AND lock_token = ${token} AND status_code IS NULL`);
}

/** Nothing ran (a 400), or nothing was created (a 5xx before any id was reserved): the key is free again. */
export async function releaseIdempotencyKey(pool: DatabasePool, k: KeyScope, token: string): Promise<void> {
  await pool.query(sql.unsafe`DELETE FROM idempotency_keys WHERE ${where(k)} AND lock_token = ${token} AND status_code IS NULL`);
}

/**
 * The attempt failed after reserving ids: the key stays bound to its request and those ids, and
 * the lease ends now, so the client's retry runs at once and completes the same objects.
 */
export async function endIdempotencyLease(pool: DatabasePool, k: KeyScope, token: string): Promise<void> {
  await pool.query(sql.unsafe`UPDATE idempotency_keys SET locked_until = now()
    WHERE ${where(k)} AND lock_token = ${token} AND status_code IS NULL`);
}

export type StoredKey = KeyScope;

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
