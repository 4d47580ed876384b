import { sql, type CommonQueryMethods, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import {
  generatePublishableKey,
  generateSecretKey,
  hashSecretKey,
  hashesEqual,
} from '../domain/api-keys.js';
import { environments, type Environment } from '../domain/environment.js';
import { newId } from '../domain/ids.js';
import type { StoreConnections } from '../domain/rails.js';

export interface CreatedStore {
  clientId: string;
  name: string;
  keys: Record<Environment, { secretKey: string; publishableKey: string }>;
}

export interface KeyOwner {
  storeId: string;
  storeName: string;
  keyId: string;
  environment: Environment;
}

const keyOwnerRow = z.object({
  store_id: z.string(),
  store_name: z.string(),
  key_id: z.string(),
  environment: z.enum(environments),
  key_hash: z.instanceof(Buffer),
});

/** Creates a store with one secret and one publishable key per environment, in one transaction. */
export async function createStore(pool: DatabasePool, name: string, keyPrefix: string): Promise<CreatedStore> {
  const clientId = newId('store');
  const keys = {} as CreatedStore['keys'];
  await pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO stores (id, name) VALUES (${clientId}, ${name})`);
    for (const env of environments) {
      const secretKey = generateSecretKey(keyPrefix, env);
      const publishableKey = generatePublishableKey(env);
      await insertKey(tx, clientId, env, 'secret', secretKey);
      await insertKey(tx, clientId, env, 'publishable', publishableKey);
      await tx.query(sql.unsafe`INSERT INTO store_settings (store_id, environment) VALUES (${clientId}, ${env})`);
      keys[env] = { secretKey, publishableKey };
    }
  });
  return { clientId, name, keys };
}

async function insertKey(
  tx: DatabaseTransactionConnection,
  storeId: string,
  env: Environment,
  kind: 'secret' | 'publishable',
  key: string,
): Promise<void> {
  const hash = kind === 'secret' ? sql.binary(hashSecretKey(key)) : null;
  const publishable = kind === 'publishable' ? key : null;
  await tx.query(sql.unsafe`
    INSERT INTO api_keys (id, store_id, environment, kind, key_hash, publishable_key, last4)
    VALUES (${newId('apiKey')}, ${storeId}, ${env}, ${kind}, ${hash}, ${publishable}, ${key.slice(-4)})`);
}

/**
 * Finds the live (unrevoked) secret key. The lookup goes through the unique hash index; the
 * fetched hash is compared again in constant time so the check does not rest on `=` alone.
 */
export async function findSecretKeyOwner(pool: DatabasePool, secretKey: string): Promise<KeyOwner | null> {
  const hash = hashSecretKey(secretKey);
  const row = await pool.maybeOne(sql.type(keyOwnerRow)`
    SELECT k.store_id, s.name AS store_name, k.id AS key_id, k.environment, k.key_hash
    FROM api_keys k JOIN stores s ON s.id = k.store_id
    WHERE k.key_hash = ${sql.binary(hash)} AND k.kind = 'secret' AND k.revoked_at IS NULL`);
  if (!row || !hashesEqual(row.key_hash, hash)) return null;
  return { storeId: row.store_id, storeName: row.store_name, keyId: row.key_id, environment: row.environment };
}

export async function findPublishableKeyOwner(pool: DatabasePool, publishableKey: string): Promise<KeyOwner | null> {
  const row = await pool.maybeOne(sql.type(keyOwnerRow.omit({ key_hash: true }))`
    SELECT k.store_id, s.name AS store_name, k.id AS key_id, k.environment
    FROM api_keys k JOIN stores s ON s.id = k.store_id
    WHERE k.publishable_key = ${publishableKey} AND k.kind = 'publishable' AND k.revoked_at IS NULL`);
  if (!row) return null;
  return { storeId: row.store_id, storeName: row.store_name, keyId: row.key_id, environment: row.environment };
}

/** What a store has connected in one environment: drives rail availability. */
export async function findStoreConnections(pool: DatabasePool, storeId: string, env: Environment): Promise<StoreConnections> {
  const row = await pool.one(sql.type(
    z.object({ mobile_money: z.boolean(), tron: z.boolean(), evm: z.boolean(), solana: z.boolean() }),
  )`
    SELECT
      EXISTS (SELECT 1 FROM mobile_money_connections WHERE store_id = ${storeId} AND environment = ${env}) AS mobile_money,
      EXISTS (SELECT 1 FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind = 'tron') AS tron,
      EXISTS (SELECT 1 FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind = 'evm') AS evm,
      EXISTS (SELECT 1 FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind = 'solana') AS solana`);
  return { mobileMoney: row.mobile_money, tronXpub: row.tron, evmXpub: row.evm, solanaWallet: row.solana };
}

export interface WalletKeys {
  tron: string | null;
  evm: string | null;
  solana: string | null;
}

/** The registered public keys (TRON/EVM account xpubs, Solana wallet address) in one environment. */
export async function findWalletKeys(db: CommonQueryMethods, storeId: string, env: Environment): Promise<WalletKeys> {
  const rows = await db.any(sql.type(z.object({ kind: z.enum(['tron', 'evm', 'solana']), public_key: z.string() }))`
    SELECT kind, public_key FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env}`);
  const keys: WalletKeys = { tron: null, evm: null, solana: null };
  for (const r of rows) keys[r.kind] = r.public_key;
  return keys;
}

export interface StorePolicy {
  lateWatchMinutes: number;
  underpaymentToleranceBps: number;
}

export async function findStorePolicy(db: CommonQueryMethods, storeId: string, env: Environment): Promise<StorePolicy> {
  const row = await db.maybeOne(sql.type(z.object({ late_payment_watch_minutes: z.number(), underpayment_tolerance_bps: z.number() }))`
    SELECT late_payment_watch_minutes, underpayment_tolerance_bps FROM store_settings WHERE store_id = ${storeId} AND environment = ${env}`);
  return { lateWatchMinutes: row?.late_payment_watch_minutes ?? 1440, underpaymentToleranceBps: row?.underpayment_tolerance_bps ?? 0 };
}

export async function updateStorePolicy(db: CommonQueryMethods, storeId: string, env: Environment, p: Partial<StorePolicy>): Promise<StorePolicy> {
  await db.query(sql.unsafe`
    INSERT INTO store_settings (store_id, environment, late_payment_watch_minutes, underpayment_tolerance_bps)
    VALUES (${storeId}, ${env}, ${p.lateWatchMinutes ?? 1440}, ${p.underpaymentToleranceBps ?? 0})
    ON CONFLICT (store_id, environment) DO UPDATE SET
      late_payment_watch_minutes = COALESCE(${p.lateWatchMinutes ?? null}::int, store_settings.late_payment_watch_minutes),
      underpayment_tolerance_bps = COALESCE(${p.underpaymentToleranceBps ?? null}::int, store_settings.underpayment_tolerance_bps),
      updated_at = now()`);
  return findStorePolicy(db, storeId, env);
}
