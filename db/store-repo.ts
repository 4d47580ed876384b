import { sql, type CommonQueryMethods, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { generatePublishableKey, generateSecretKey } from '../domain/api-keys.js';
import { environments, type Environment } from '../domain/environment.js';
import { newId } from '../domain/ids.js';
import type { StoreConnections } from '../domain/rails.js';
import { checkPublishableKey, checkSecretKey, insertKey, type KeyOwner } from './api-key-repo.js';

export type { KeyOwner } from './api-key-repo.js';

export interface CreatedStore {
  clientId: string;
  name: string;
  keys: Record<Environment, { secretKey: string; publishableKey: string }>;
}

/** Creates a store with one secret and one publishable key per environment, in one transaction (a savepoint inside another). */
export async function createStore(pool: DatabasePool | DatabaseTransactionConnection, name: string, keyPrefix: string): Promise<CreatedStore> {
  const clientId = newId('store');
  const keys = {} as CreatedStore['keys'];
  await pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`INSERT INTO stores (id, name) VALUES (${clientId}, ${name})`);
    for (const env of environments) {
      const secretKey = generateSecretKey(keyPrefix, env);
      const publishableKey = generatePublishableKey(env);
      await insertKey(tx, { storeId: clientId, environment: env, kind: 'secret', key: secretKey });
      await insertKey(tx, { storeId: clientId, environment: env, kind: 'publishable', key: publishableKey });
      await tx.query(sql.unsafe`INSERT INTO store_settings (store_id, environment) VALUES (${clientId}, ${env})`);
      keys[env] = { secretKey, publishableKey };
    }
  });
  return { clientId, name, keys };
}

/** The owner of a secret key that still authenticates (unrevoked, not past a roll's grace period). */
export async function findSecretKeyOwner(pool: DatabasePool, secretKey: string): Promise<KeyOwner | null> {
  const check = await checkSecretKey(pool, secretKey);
  return check?.status === 'active' ? check.owner : null;
}

export async function findPublishableKeyOwner(pool: DatabasePool, publishableKey: string): Promise<KeyOwner | null> {
  const check = await checkPublishableKey(pool, publishableKey);
  return check?.status === 'active' ? check.owner : null;
}

const connectionsRow = z.object({ mobile_money: z.boolean(), tron: z.boolean(), evm: z.boolean(), solana: z.boolean() });

/** What a store has connected in one environment: drives rail availability. */
export async function findStoreConnections(pool: DatabasePool, storeId: string, env: Environment): Promise<StoreConnections> {
  const row = await pool.one(sql.type(connectionsRow)`
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

const walletKeyRow = z.object({ kind: z.enum(['tron', 'evm', 'solana']), public_key: z.string() });

/** The registered public keys (TRON/EVM account xpubs, Solana wallet address) in one environment. */
export async function findWalletKeys(db: CommonQueryMethods, storeId: string, env: Environment): Promise<WalletKeys> {
  const rows = await db.any(sql.type(walletKeyRow)`
    SELECT kind, public_key FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env}`);
  const keys: WalletKeys = { tron: null, evm: null, solana: null };
  for (const r of rows) keys[r.kind] = r.public_key;
  return keys;
}

/** Everything creating a payment request reads of its store, in one statement. */
export interface CreationContext {
  connections: StoreConnections;
  keys: WalletKeys;
  policy: StorePolicy;
  defaultRedirectUrl: string | null;
  shortcode: string | null;
}

const creationContextRow = z.object({
  shortcode: z.string().nullable(),
  tron: z.string().nullable(),
  evm: z.string().nullable(),
  solana: z.string().nullable(),
  late_payment_watch_minutes: z.number().nullable(),
  underpayment_tolerance_bps: z.number().nullable(),
  default_redirect_url: z.string().nullable(),
});

export async function findCreationContext(db: CommonQueryMethods, storeId: string, env: Environment): Promise<CreationContext> {
  const row = await db.one(sql.type(creationContextRow)`
    SELECT
      (SELECT shortcode FROM mobile_money_connections WHERE store_id = ${storeId} AND environment = ${env}) AS shortcode,
      (SELECT public_key FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind = 'tron') AS tron,
      (SELECT public_key FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind = 'evm') AS evm,
      (SELECT public_key FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind = 'solana') AS solana,
      s.late_payment_watch_minutes, s.underpayment_tolerance_bps, s.default_redirect_url
    FROM (SELECT 1) AS one LEFT JOIN store_settings s ON s.store_id = ${storeId} AND s.environment = ${env}`);
  return {
    connections: { mobileMoney: row.shortcode !== null, tronXpub: row.tron !== null, evmXpub: row.evm !== null, solanaWallet: row.solana !== null },
    keys: { tron: row.tron, evm: row.evm, solana: row.solana },
    policy: policyOf(row),
    defaultRedirectUrl: row.default_redirect_url,
    shortcode: row.shortcode,
  };
}

/** The defaults a store without settings has. */
function policyOf(row: { late_payment_watch_minutes: number | null; underpayment_tolerance_bps: number | null } | null): StorePolicy {
  return { lateWatchMinutes: row?.late_payment_watch_minutes ?? 1440, underpaymentToleranceBps: row?.underpayment_tolerance_bps ?? 0 };
}

export interface StorePolicy {
  lateWatchMinutes: number;
  underpaymentToleranceBps: number;
}

const policyRow = z.object({ late_payment_watch_minutes: z.number(), underpayment_tolerance_bps: z.number() });

export async function findStorePolicy(db: CommonQueryMethods, storeId: string, env: Environment): Promise<StorePolicy> {
  const row = await db.maybeOne(sql.type(policyRow)`
    SELECT late_payment_watch_minutes, underpayment_tolerance_bps FROM store_settings WHERE store_id = ${storeId} AND environment = ${env}`);
  return policyOf(row);
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
