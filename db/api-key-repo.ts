import { sql, type CommonQueryMethods, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { hashSecretKey, hashesEqual, type KeyKind } from '../domain/api-keys.js';
import { environments, type Environment } from '../domain/environment.js';
import { newId } from '../domain/ids.js';

/**
 * API keys: the lookups behind authentication and the rows behind key management. A key
 * authenticates while it is unrevoked and not past the grace period a roll gave it; that is
 * decided here, by the database clock. Authentication keeps what it learnt for a few seconds
 * (services/keys/key-owners.ts), so a revocation made elsewhere holds everywhere within that time.
 */
export interface KeyScope {
  storeId: string;
  environment: Environment;
}

export interface KeyOwner {
  storeId: string;
  storeName: string;
  keyId: string;
  environment: Environment;
}

/** The condition for "this key still authenticates", for queries that join api_keys as `alias`. */
export const keyIsActive = (alias: string) =>
  sql.fragment`(${sql.identifier([alias, 'revoked_at'])} IS NULL AND (${sql.identifier([alias, 'expires_at'])} IS NULL OR ${sql.identifier([alias, 'expires_at'])} > now()))`;

export const keyStates = ['active', 'expiring', 'expired', 'revoked'] as const;
export type KeyState = (typeof keyStates)[number];

const keyRow = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: z.enum(environments),
  kind: z.enum(['secret', 'publishable']),
  name: z.string().nullable(),
  publishable_key: z.string().nullable(),
  last4: z.string(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  replaced_by: z.string().nullable(),
  state: z.enum(keyStates),
});
export type KeyRow = z.infer<typeof keyRow>;

/** Every column a key record shows (never key_hash), with its state by the database clock. */
const keyColumns = sql.fragment`
  id, store_id, environment, kind, name, publishable_key, last4, created_at, last_used_at, expires_at, revoked_at, replaced_by,
  CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
       WHEN expires_at IS NULL THEN 'active'
       WHEN expires_at > now() THEN 'expiring'
       ELSE 'expired' END AS state`;

/** How long a revoked or expired key stays in the list, so a merchant can see what ended and when. */
const endedKeysListedDays = 30;

export async function listKeys(db: CommonQueryMethods, scope: KeyScope): Promise<readonly KeyRow[]> {
  return db.any(sql.type(keyRow)`
    SELECT ${keyColumns} FROM api_keys k
    WHERE store_id = ${scope.storeId} AND environment = ${scope.environment}
      AND (${keyIsActive('k')} OR COALESCE(revoked_at, expires_at) > now() - ${endedKeysListedDays} * interval '1 day')
    ORDER BY created_at DESC, kind DESC, id`);
}

/** One key of the scope, or null: another store's or environment's key is as unknown as a made-up id. */
export async function findKey(db: CommonQueryMethods, scope: KeyScope, id: string, opts: { forUpdate?: boolean } = {}): Promise<KeyRow | null> {
  return db.maybeOne(sql.type(keyRow)`
    SELECT ${keyColumns} FROM api_keys
    WHERE id = ${id} AND store_id = ${scope.storeId} AND environment = ${scope.environment}
    ${opts.forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
}

/** Keys of one kind that work and have not been rolled: what the per-store cap counts. */
export async function countUnrolledActiveKeys(db: CommonQueryMethods, scope: KeyScope, kind: KeyKind): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM api_keys k
    WHERE store_id = ${scope.storeId} AND environment = ${scope.environment} AND kind = ${kind}
      AND replaced_by IS NULL AND ${keyIsActive('k')}`);
}

/** Locks the store row, so key changes of one store happen one at a time; false when there is no such store. */
export async function lockStore(tx: DatabaseTransactionConnection, storeId: string): Promise<boolean> {
  const row = await tx.maybeOne(sql.unsafe`SELECT id FROM stores WHERE id = ${storeId} FOR UPDATE`);
  return row !== null;
}

/** Stores a new key: a secret key only as its SHA-256, a publishable key as it is (it is public). */
export async function insertKey(
  db: CommonQueryMethods,
  k: { storeId: string; environment: Environment; kind: KeyKind; key: string; name?: string | null },
): Promise<KeyRow> {
  const hash = k.kind === 'secret' ? sql.binary(hashSecretKey(k.key)) : null;
  const publishable = k.kind === 'publishable' ? k.key : null;
  return db.one(sql.type(keyRow)`
    INSERT INTO api_keys (id, store_id, environment, kind, key_hash, publishable_key, last4, name)
    VALUES (${newId('apiKey')}, ${k.storeId}, ${k.environment}, ${k.kind}, ${hash}, ${publishable}, ${k.key.slice(-4)}, ${k.name ?? null})
    RETURNING ${keyColumns}`);
}

/** The old side of a roll: it keeps working for `graceSeconds` (0: it stops now) and names its successor. */
export async function markRolled(db: CommonQueryMethods, id: string, replacedBy: string, graceSeconds: number): Promise<KeyRow> {
  return db.one(sql.type(keyRow)`
    UPDATE api_keys SET expires_at = now() + make_interval(secs => ${graceSeconds}), replaced_by = ${replacedBy}
    WHERE id = ${id}
    RETURNING ${keyColumns}`);
}

/** Revokes a key now. */
export async function markRevoked(db: CommonQueryMethods, id: string): Promise<KeyRow> {
  return db.one(sql.type(keyRow)`
    UPDATE api_keys SET revoked_at = now() WHERE id = ${id}
    RETURNING ${keyColumns}`);
}

/** What authentication learns about a presented key. */
export type KeyCheck =
  | { status: 'active'; owner: KeyOwner; lastUseDue: boolean; expiresAt: string | null }
  | { status: 'revoked'; revokedAt: string }
  | { status: 'expired'; expiresAt: string; replacedBy: string | null };

const checkRow = z.object({
  key_id: z.string(),
  store_id: z.string(),
  store_name: z.string(),
  environment: z.enum(environments),
  key_hash: z.instanceof(Buffer).nullable(),
  revoked_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  replaced_by: z.string().nullable(),
  active: z.boolean(),
  last_use_due: z.boolean(),
});

/** Writing last_used_at at most this often per key keeps authentication a read nearly always. */
const lastUseResolutionSeconds = 60;

const checkColumns = sql.fragment`
  k.id AS key_id, k.store_id, s.name AS store_name, k.environment, k.key_hash, k.revoked_at, k.expires_at, k.replaced_by,
  ${keyIsActive('k')} AS active,
  (k.last_used_at IS NULL OR k.last_used_at < now() - ${lastUseResolutionSeconds} * interval '1 second') AS last_use_due`;

function toCheck(row: z.infer<typeof checkRow>): KeyCheck {
  if (row.revoked_at) return { status: 'revoked', revokedAt: row.revoked_at };
  if (!row.active) return { status: 'expired', expiresAt: row.expires_at!, replacedBy: row.replaced_by };
  const owner = { storeId: row.store_id, storeName: row.store_name, keyId: row.key_id, environment: row.environment };
  return { status: 'active', owner, lastUseDue: row.last_use_due, expiresAt: row.expires_at };
}

/**
 * Looks a secret key up through the unique hash index; the fetched hash is compared again in
 * constant time so the check does not rest on `=` alone. Null: no such key.
 */
export async function checkSecretKey(db: CommonQueryMethods, secretKey: string): Promise<KeyCheck | null> {
  const hash = hashSecretKey(secretKey);
  const row = await db.maybeOne(sql.type(checkRow)`
    SELECT ${checkColumns} FROM api_keys k JOIN stores s ON s.id = k.store_id
    WHERE k.key_hash = ${sql.binary(hash)} AND k.kind = 'secret'`);
  if (!row || !row.key_hash || !hashesEqual(row.key_hash, hash)) return null;
  return toCheck(row);
}

export async function checkPublishableKey(db: CommonQueryMethods, publishableKey: string): Promise<KeyCheck | null> {
  const row = await db.maybeOne(sql.type(checkRow)`
    SELECT ${checkColumns} FROM api_keys k JOIN stores s ON s.id = k.store_id
    WHERE k.publishable_key = ${publishableKey} AND k.kind = 'publishable'`);
  return row ? toCheck(row) : null;
}

/** Records a use; the condition makes concurrent requests on several instances write once. */
export async function recordKeyUse(db: DatabasePool, keyId: string): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE api_keys SET last_used_at = now()
    WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at < now() - ${lastUseResolutionSeconds} * interval '1 second')`);
}

export async function storeExists(db: CommonQueryMethods, storeId: string): Promise<boolean> {
  return db.exists(sql.unsafe`SELECT 1 FROM stores WHERE id = ${storeId}`);
}
