import { ApplicationFailure, log } from '@temporalio/activity';
import type { CommonQueryMethods } from 'slonik';
import { findLinkDeposit } from '../../db/deposit-evidence-repo.js';
import { insertEvent } from '../../db/event-repo.js';
import {
  markLinkConfirmed,
  moveLinkStatus,
  setAmountReceived,
  stopWatchingOwner,
  upsertPayment,
  type Disposition,
  type PaymentState,
} from '../../db/link-payment-repo.js';
import { findLinkById, listLinkPayments } from '../../db/payment-link-repo.js';
import { invoiceDto } from '../../services/invoices/dto.js';
import { paymentLinkDetailDto } from '../../services/payment-links/dto.js';
import { findInvoiceView } from '../../db/invoice-repo.js';
import { railFacts } from '../../rails/registry.js';
import { depositEvidenceProblem, parseDepositKey } from '../../domain/deposit-evidence.js';
import { isRailId, type RailId, type UsdtRail } from '../../domain/rails.js';
import type { LinkStatus } from '../../domain/states.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import type { ActivityDeps } from '../index.js';

export type { Disposition, PaymentState };

export interface VerifiedDeposit {
  state: 'seen' | 'confirmed' | 'dropped';
  report: PaymentReport;
}

/** A simulated payment exists only in the test environment: refused here as well as by the API and the schema. */
async function refuseSimulatedOnLive(db: CommonQueryMethods, linkId: string, report: PaymentReport): Promise<void> {
  if (!report.simulated) return;
  if ((await findLinkById(db, linkId))?.environment !== 'test') throw ApplicationFailure.nonRetryable('Simulated payments exist only in the test environment.', 'SimulatedOnLive');
}

/**
 * Activities that write the payment-link read model. Each is idempotent: a status update only
 * applies from the expected states (re-running it changes nothing), payments upsert on their
 * key, and the confirmation event is deduplicated by link id.
 */
export function createLinkActivities(deps: Pick<ActivityDeps, 'pool' | 'config'>) {
  const { pool } = deps;
  return {
    async setLinkStatus(input: { linkId: string; from: LinkStatus[]; to: LinkStatus }): Promise<boolean> {
      return moveLinkStatus(pool, input.linkId, input.from, input.to);
    },

    async recordPayment(input: {
      linkId: string;
      report: PaymentReport;
      state: PaymentState;
      disposition: Disposition | null;
      failureReason?: string | null;
      /** The link's new total received in micro-USDT, when this payment changes it. */
      receivedMicro?: string;
    }): Promise<void> {
      await pool.transaction(async (tx) => {
        await refuseSimulatedOnLive(tx, input.linkId, input.report);
        await upsertPayment(tx, input.linkId, input);
        if (input.receivedMicro !== undefined) {
          await setAmountReceived(tx, input.linkId, input.receivedMicro);
        }
      });
    },

    /**
     * Confirms the link (or invoice), records the payment and writes the `payment_link.confirmed`
     * (`invoice.paid`) event in one
     * transaction (the outbox). Returns the event id for dispatch; the same id on every retry.
     */
    async confirmLink(input: {
      linkId: string;
      report: PaymentReport;
      from: LinkStatus[];
      disposition: Disposition;
      receivedMicro: string;
      confirmedAt: string;
    }): Promise<{ eventId: string }> {
      return pool.transaction(async (tx) => {
        await refuseSimulatedOnLive(tx, input.linkId, input.report);
        await upsertPayment(tx, input.linkId, { report: input.report, state: 'confirmed', disposition: input.disposition });
        await markLinkConfirmed(tx, input.linkId, input.from, { report: input.report, confirmedAt: input.confirmedAt, receivedMicro: input.receivedMicro });
        const row = (await findLinkById(tx, input.linkId))!;
        const invoice = row.kind === 'invoice';
        const data = invoice
          ? invoiceDto((await findInvoiceView(tx, input.linkId))!)
          : paymentLinkDetailDto(row, await listLinkPayments(tx, input.linkId), deps.config);
        const type = invoice ? 'invoice.paid' : 'payment_link.confirmed';
        const event = await insertEvent(tx, {
          storeId: row.store_id,
          environment: row.environment,
          type,
          dedupeKey: `${type}:${input.linkId}`,
          data,
          createdAt: input.confirmedAt,
        });
        return { eventId: event.id };
      });
    },

    /**
     * The evidence behind a chain signal: the deposit the watcher recorded for this link, checked
     * against the rail, the link's address and the rail's units. Its state (seen, confirmed at
     * depth, dropped by a reorganisation) and amount are the recorded ones, whatever the signal
     * said. Null when nothing recorded backs the signal.
     */
    async verifyDeposit(input: { linkId: string; rail: RailId; key: string }): Promise<VerifiedDeposit | null> {
      const at = parseDepositKey(input.key);
      if (!at || !isRailId(input.rail) || input.rail === 'MOBILE_MONEY') return null;
      const rail: UsdtRail = input.rail;
      const row = await findLinkDeposit(pool, input.linkId, rail, at.txHash, at.logIndex);
      if (!row) return null;
      const problem = depositEvidenceProblem(rail, railFacts[rail], {
        toAddress: row.to_address,
        decimals: row.decimals,
        linkAddresses: { tron: row.tron_address, evm: row.evm_address, solana: row.solana_address },
      });
      if (problem) {
        log.warn('recorded deposit does not fit the link; not counted', { linkId: input.linkId, rail, key: input.key, problem });
        return null;
      }
      return {
        state: row.state,
        report: {
          rail,
          key: input.key,
          externalId: row.tx_hash,
          payer: row.from_address,
          amountMinor: row.amount_minor,
          decimals: row.decimals,
          blockNumber: Number(row.block_number),
          at: new Date(row.updated_at).toISOString(),
        },
      };
    },

    /** The watch window is over: chain watchers stop matching this link's addresses. */
    async stopWatchingLink(input: { linkId: string }): Promise<void> {
      await stopWatchingOwner(pool, input.linkId);
    },
  };
}

export type LinkActivities = ReturnType<typeof createLinkActivities>;
