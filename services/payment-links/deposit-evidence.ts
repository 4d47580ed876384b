import type { CommonQueryMethods } from 'slonik';
import type { DepositEvidenceRow } from '../../db/deposit-evidence-repo.js';
import { findLinkById } from '../../db/payment-link-repo.js';
import { depositEvidenceProblem } from '../../domain/deposit-evidence.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import type { RailId } from '../../domain/rails.js';
import { isScanned } from '../../rails/methods.js';
import { railFacts } from '../../rails/registry.js';

/** A recorded deposit as the link's workflow counts it. */
export interface VerifiedDeposit {
  state: 'seen' | 'confirmed' | 'dropped';
  report: PaymentReport;
}

/**
 * The recorded deposit checked against the rail, the link's address and the rail's units: the
 * report the workflow can count, or why it does not fit the link (`problem`, with the deposit's
 * key). Null for a rail no watcher records deposits of.
 */
export function verifyRecordedDeposit(rail: RailId, row: DepositEvidenceRow): { deposit: VerifiedDeposit } | { problem: string; key: string } | null {
  if (!isScanned(rail)) return null;
  const key = `${row.tx_hash}:${row.log_index}`;
  const problem = depositEvidenceProblem(rail, railFacts[rail], {
    toAddress: row.to_address,
    decimals: row.decimals,
    linkAddresses: { tron: row.tron_address, evm: row.evm_address, solana: row.solana_address },
  });
  if (problem) return { problem, key };
  return {
    deposit: {
      state: row.state,
      report: {
        rail,
        key,
        externalId: row.tx_hash,
        payer: row.from_address,
        amountMinor: row.amount_minor,
        decimals: row.decimals,
        blockNumber: Number(row.block_number),
        at: new Date(row.updated_at).toISOString(),
      },
    },
  };
}

export const simulatedOnLiveMessage = 'Simulated payments exist only in the test environment.';

/**
 * A simulated payment exists only in the test environment: refused here (the message) as well as
 * by the API and the schema. Null when the report may be recorded on the link.
 */
export async function simulatedOnLiveProblem(db: CommonQueryMethods, linkId: string, report: PaymentReport): Promise<string | null> {
  if (!report.simulated) return null;
  return (await findLinkById(db, linkId))?.environment === 'test' ? null : simulatedOnLiveMessage;
}
