import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { depositRow } from './chain-repo.js';

/** A recorded deposit (chain-repo's row) with the addresses its link was given. */
const evidenceRow = depositRow
  .pick({ tx_hash: true, log_index: true, to_address: true, from_address: true, amount_minor: true, decimals: true, block_number: true, state: true })
  .extend({
    updated_at: z.string(),
    tron_address: z.string().nullable(),
    evm_address: z.string().nullable(),
    solana_address: z.string().nullable(),
  });
export type DepositEvidenceRow = z.infer<typeof evidenceRow>;

/**
 * The deposit the chain watcher recorded for one link (or invoice), with the addresses the link
 * was given: the evidence a link's workflow checks before it counts a payment. Only a deposit
 * owned by this link, in the link's environment, is returned.
 */
export async function findLinkDeposit(
  db: CommonQueryMethods,
  linkId: string,
  rail: string,
  txHash: string,
  logIndex: number,
): Promise<DepositEvidenceRow | null> {
  return db.maybeOne(sql.type(evidenceRow)`
    SELECT d.tx_hash, d.log_index, d.to_address, d.from_address, d.amount_minor::text, d.decimals, d.block_number::text, d.state,
      d.updated_at, l.tron_address, l.evm_address, l.solana_address
    FROM chain_deposits d JOIN payment_links l ON l.id = d.owner_id AND l.kind = d.owner_kind AND l.environment = d.environment
    WHERE d.owner_id = ${linkId} AND d.rail = ${rail} AND d.tx_hash = ${txHash} AND d.log_index = ${logIndex}`);
}

const pendingRow = evidenceRow.extend({ rail: z.string() });
export type PendingEvidenceRow = z.infer<typeof pendingRow>;

/**
 * The deposits recorded for a link (or invoice) that its read model does not show in their
 * recorded state yet: seen or confirmed deposits with no payment row, or a payment row behind them
 * (seen while the deposit is confirmed, dropped while it is seen again), and dropped deposits the
 * link still shows as seen. What the link's workflow has not acted on, however its hints went.
 * Oldest block first; `after` pages on (block, tx, log index).
 */
export async function pendingLinkDeposits(
  db: CommonQueryMethods,
  linkId: string,
  limit: number,
  after?: { blockNumber: string; txHash: string; logIndex: number },
): Promise<PendingEvidenceRow[]> {
  const page = after
    ? sql.fragment`AND (d.block_number, d.tx_hash, d.log_index) > (${after.blockNumber}::bigint, ${after.txHash}, ${after.logIndex})`
    : sql.fragment``;
  return [...(await db.any(sql.type(pendingRow)`
    SELECT d.rail, d.tx_hash, d.log_index, d.to_address, d.from_address, d.amount_minor::text, d.decimals, d.block_number::text, d.state,
      d.updated_at, l.tron_address, l.evm_address, l.solana_address
    FROM chain_deposits d
    JOIN payment_links l ON l.id = d.owner_id AND l.kind = d.owner_kind AND l.environment = d.environment
    LEFT JOIN link_payments p ON p.link_id = d.owner_id AND p.payment_key = d.tx_hash || ':' || d.log_index
    WHERE d.owner_id = ${linkId} AND d.owner_kind IN ('payment_link', 'invoice')
      AND CASE d.state
        WHEN 'seen' THEN p.state IS NULL OR p.state = 'dropped'
        WHEN 'confirmed' THEN p.state IS NULL OR p.state <> 'confirmed'
        ELSE p.state = 'seen'
      END
      ${page}
    ORDER BY d.block_number, d.tx_hash, d.log_index
    LIMIT ${limit}`))];
}
