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
