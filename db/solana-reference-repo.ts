import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import { depositRow, type DepositOwner, type DepositRow } from './chain-repo.js';

/** A signature and its slot: how far a reference's history has been read. */
export interface SignatureMark {
  signature: string;
  slot: number;
}

const referenceRow = z.object({ address: z.string(), recipient: z.string().nullable() });

/**
 * The Solana Pay references still inside their watch window, oldest first, with the merchant
 * wallet the link was created with (payment_links.solana_address, which holds invoices too).
 */
export async function openReferenceRows(db: CommonQueryMethods, env: Environment, nowMs: number) {
  return db.any(sql.type(referenceRow)`
    SELECT w.address, p.solana_address AS recipient FROM watched_addresses w
    JOIN payment_links p ON p.id = w.owner_id
    WHERE w.family = 'sol_ref' AND w.environment = ${env} AND w.watch_until > ${new Date(nowMs).toISOString()}
    ORDER BY w.seq`);
}

const markRow = z.object({ owner_kind: z.string(), owner_id: z.string(), tx_hash: z.string(), block_number: z.string() });

/**
 * Per owner, the newest deposit on the reference rail (`rail`, as its scanner passes it) still
 * standing (not dropped): everything older than it on the reference has been read, because a
 * reference's history is always read oldest first. This is the durable floor of the
 * per-reference `until` after a restart.
 */
export async function lastDeposits(db: CommonQueryMethods, rail: string, env: Environment, owners: readonly DepositOwner[]): Promise<Map<string, SignatureMark>> {
  const marks = new Map<string, SignatureMark>();
  if (owners.length === 0) return marks;
  const rows = await db.any(sql.type(markRow)`
    SELECT DISTINCT ON (owner_kind, owner_id) owner_kind, owner_id, tx_hash, block_number::text FROM chain_deposits
    WHERE rail = ${rail} AND environment = ${env} AND state <> 'dropped'
      AND owner_id = ANY(${sql.array(owners.map((o) => o.id), 'text')})
    ORDER BY owner_kind, owner_id, block_number DESC`);
  for (const r of rows) marks.set(`${r.owner_kind}:${r.owner_id}`, { signature: r.tx_hash, slot: Number(r.block_number) });
  return marks;
}

/**
 * Dropped deposits whose owner is still watched: re-checked every tick, so a transaction that
 * lands again (in another fork, or a status that was wrongly missing) is found again.
 */
export async function droppedOpenDeposits(db: CommonQueryMethods, rail: string, env: Environment): Promise<DepositRow[]> {
  return [...(await db.any(sql.type(depositRow)`
    SELECT d.tx_hash, d.log_index, d.to_address, d.from_address, d.amount_minor::text, d.decimals, d.block_number::text,
      d.block_hash, d.owner_kind, d.owner_id, d.store_id, d.derived_index, d.state, d.signalled
    FROM chain_deposits d
    WHERE d.rail = ${rail} AND d.environment = ${env} AND d.state = 'dropped' AND EXISTS (
      SELECT 1 FROM watched_addresses w WHERE w.family = 'sol_ref' AND w.environment = d.environment
        AND w.owner_kind = d.owner_kind AND w.owner_id = d.owner_id AND w.watch_until > now())
    ORDER BY d.block_number LIMIT 256`))];
}
