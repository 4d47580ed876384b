import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * The store's registered wallets (`store_wallets`: TRON/EVM account xpubs, the Solana wallet
 * address) and the receive-branch high-water mark of the derive endpoint (the addresses it handed
 * out are in derived-address-repo). Reading the keys is `findWalletKeys` in store-repo, shared
 * with payment-link creation.
 */
export type WalletSlot = 'tron' | 'evm' | 'solana';

/**
 * Registers or replaces the key of one slot; the same key again is a no-op that keeps
 * `connected_at`. A new key stamps `changed_xid` (a new row gets it by default), which is how the
 * chain watchers learn to watch that key's derived addresses from their next tick on.
 */
export async function upsertWallet(db: CommonQueryMethods, storeId: string, env: Environment, slot: WalletSlot, publicKey: string): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO store_wallets (store_id, environment, kind, public_key)
    VALUES (${storeId}, ${env}, ${slot}, ${publicKey})
    ON CONFLICT (store_id, environment, kind) DO UPDATE
      SET public_key = EXCLUDED.public_key, connected_at = now(), changed_xid = pg_current_xact_id()
      WHERE store_wallets.public_key <> EXCLUDED.public_key`);
}

/**
 * Registers a TRON or EVM key for a store unless another store holds it, in either slot and
 * either environment (one key, one store: its link and receive addresses must belong to one
 * store). A lock on the key serialises registrations of that key, so two stores that race for it
 * cannot both get it. False, with nothing written, when another store holds the key and this one
 * does not.
 */
export async function registerStoreKey(
  pool: DatabasePool,
  storeId: string,
  env: Environment,
  slot: WalletSlot,
  publicKey: string,
): Promise<boolean> {
  return pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`store_wallets.public_key:${publicKey}`}, 0))`);
    // A store that holds the key already (stores that shared one before the rule) may register it again.
    const holders = await tx.anyFirst(sql.type(z.object({ store_id: z.string() }))`
      SELECT DISTINCT store_id FROM store_wallets WHERE public_key = ${publicKey} AND kind IN ('tron', 'evm')`);
    if (holders.length > 0 && !holders.includes(storeId)) return false;
    await upsertWallet(tx, storeId, env, slot, publicKey);
    return true;
  });
}

/** Disconnects one slot; false when nothing was connected there. */
export async function deleteWallet(db: CommonQueryMethods, storeId: string, env: Environment, slot: WalletSlot): Promise<boolean> {
  const deleted = await db.maybeOneFirst(sql.type(z.object({ kind: z.string() }))`
    DELETE FROM store_wallets WHERE store_id = ${storeId} AND environment = ${env} AND kind = ${slot} RETURNING kind`);
  return deleted !== null;
}

/** The highest index derive has handed out, or null when it never ran (the watched gap follows it). */
export async function findHighestDerivedIndex(db: CommonQueryMethods, storeId: string, env: Environment): Promise<number | null> {
  return db.maybeOneFirst(sql.type(z.object({ highest_index: z.number() }))`
    SELECT highest_index FROM derived_index_marks WHERE store_id = ${storeId} AND environment = ${env}`);
}
