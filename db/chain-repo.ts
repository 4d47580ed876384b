import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Cursor } from '../domain/chain-cursor.js';
import type { Environment } from '../domain/environment.js';

export type { Cursor };

export async function loadCursor(db: CommonQueryMethods, rail: string, env: Environment): Promise<Cursor | null> {
  const row = await db.maybeOne(sql.type(z.object({ block_number: z.string(), block_hash: z.string().nullable(), scanned_to: z.string().nullable() }))`
    SELECT block_number::text, block_hash, scanned_to::text FROM chain_cursors WHERE rail = ${rail} AND environment = ${env}`);
  return row ? { number: row.block_number, hash: row.block_hash, scannedTo: row.scanned_to } : null;
}

export async function saveCursor(db: CommonQueryMethods, rail: string, env: Environment, c: Cursor): Promise<void> {
  const scannedTo = c.scannedTo ?? null;
  await db.query(sql.unsafe`
    INSERT INTO chain_cursors (rail, environment, block_number, block_hash, scanned_to) VALUES (${rail}, ${env}, ${c.number}, ${c.hash}, ${scannedTo})
    ON CONFLICT (rail, environment) DO UPDATE SET block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash,
      scanned_to = EXCLUDED.scanned_to, updated_at = now()`);
}

/** How long ago each watcher's cursor was last saved, by any process (every successful tick saves it). */
export async function cursorAges(db: CommonQueryMethods): Promise<readonly { rail: string; environment: string; ageMs: number }[]> {
  const rows = await db.any(sql.type(z.object({ rail: z.string(), environment: z.string(), age_ms: z.number() }))`
    SELECT rail, environment, (extract(epoch FROM now() - updated_at) * 1000)::float8 AS age_ms FROM chain_cursors`);
  return rows.map((r) => ({ rail: r.rail, environment: r.environment, ageMs: r.age_ms }));
}

export interface DepositOwner {
  kind: 'payment_link' | 'invoice' | 'derived';
  id: string;
  storeId: string;
  derivedIndex?: number;
}

export interface NewDeposit {
  txHash: string;
  logIndex: number;
  to: string;
  from: string | null;
  amountMinor: bigint;
  decimals: number;
  blockNumber: bigint;
  blockHash: string | null;
  owner: DepositOwner;
}

/**
 * Records a deposit as seen. A deposit dropped by a reorg and found again (re-included) goes
 * back to seen with its new block; one already seen or confirmed is left alone. True when the
 * deposit was not recorded before (a first sighting, not a re-inclusion or a repeat).
 */
export async function upsertSeenDeposit(db: CommonQueryMethods, rail: string, env: Environment, d: NewDeposit): Promise<boolean> {
  const rows = await db.any(sql.type(z.object({ inserted: z.boolean() }))`
    INSERT INTO chain_deposits (rail, environment, tx_hash, log_index, to_address, from_address, amount_minor, decimals,
      block_number, block_hash, owner_kind, owner_id, store_id, derived_index, state)
    VALUES (${rail}, ${env}, ${d.txHash}, ${d.logIndex}, ${d.to}, ${d.from}, ${String(d.amountMinor)}, ${d.decimals},
      ${String(d.blockNumber)}, ${d.blockHash}, ${d.owner.kind}, ${d.owner.id}, ${d.owner.storeId}, ${d.owner.derivedIndex ?? null}, 'seen')
    ON CONFLICT (rail, environment, tx_hash, log_index) DO UPDATE SET
      state = 'seen', block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, updated_at = now()
    WHERE chain_deposits.state = 'dropped'
    RETURNING (xmax = 0) AS inserted`);
  return rows[0]?.inserted === true;
}

export const depositRow = z.object({
  tx_hash: z.string(),
  log_index: z.number(),
  to_address: z.string(),
  from_address: z.string().nullable(),
  amount_minor: z.string(),
  decimals: z.number(),
  block_number: z.string(),
  block_hash: z.string().nullable(),
  owner_kind: z.enum(['payment_link', 'invoice', 'derived']),
  owner_id: z.string(),
  store_id: z.string(),
  derived_index: z.number().nullable(),
  state: z.enum(['seen', 'confirmed', 'dropped']),
  signalled: z.string(),
});
export type DepositRow = z.infer<typeof depositRow>;

const depositColumns = sql.fragment`tx_hash, log_index, to_address, from_address, amount_minor::text, decimals, block_number::text,
  block_hash, owner_kind, owner_id, store_id, derived_index, state, signalled`;

export async function seenDeposits(db: CommonQueryMethods, rail: string, env: Environment): Promise<DepositRow[]> {
  return [...(await db.any(sql.type(depositRow)`
    SELECT ${depositColumns} FROM chain_deposits WHERE rail = ${rail} AND environment = ${env} AND state = 'seen'
    ORDER BY block_number, log_index LIMIT 5000`))];
}

/** Deposits whose owner has not yet been told their current state. */
export async function unsignalledDeposits(db: CommonQueryMethods, rail: string, env: Environment): Promise<DepositRow[]> {
  return [...(await db.any(sql.type(depositRow)`
    SELECT ${depositColumns} FROM chain_deposits WHERE rail = ${rail} AND environment = ${env} AND signalled <> state
    ORDER BY block_number, log_index LIMIT 5000`))];
}

export async function setDepositState(db: CommonQueryMethods, rail: string, env: Environment, txHash: string, logIndex: number, state: 'confirmed' | 'dropped'): Promise<void> {
  await db.query(sql.unsafe`UPDATE chain_deposits SET state = ${state}, updated_at = now()
    WHERE rail = ${rail} AND environment = ${env} AND tx_hash = ${txHash} AND log_index = ${logIndex} AND state = 'seen'`);
}

export async function markSignalled(db: CommonQueryMethods, rail: string, env: Environment, txHash: string, logIndex: number, state: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE chain_deposits SET signalled = ${state}
    WHERE rail = ${rail} AND environment = ${env} AND tx_hash = ${txHash} AND log_index = ${logIndex} AND state = ${state}`);
}
