import { ApplicationFailure, log } from '@temporalio/activity';
import type { CommonQueryMethods } from 'slonik';
import { findLinkDeposit, pendingLinkDeposits, type DepositEvidenceRow } from '../../db/deposit-evidence-repo.js';
import { insertEvent } from '../../db/event-repo.js';
import { eventOrigin } from '../webhooks/origin.js';
import {
  markLinkConfirmed,
  moveLinkStatus,
  setAmountReceived,
  stopWatchingOwner,
  upsertPayment,
  type Disposition,
  type PaymentState,
} from '../../db/link-payment-repo.js';
import { findLinkById, listLinkPayments, type LinkPaymentRow, type LinkRow } from '../../db/payment-link-repo.js';
import type { Metrics } from '../../domain/metrics.js';
import { invoiceDto } from '../../services/invoices/dto.js';
import { paymentLinkDetailDto } from '../../services/payment-links/dto.js';
import { findInvoiceView } from '../../db/invoice-repo.js';
import { parseDepositKey } from '../../domain/deposit-evidence.js';
import type { RailId } from '../../domain/rails.js';
import { simulatedOnLiveProblem, verifyRecordedDeposit, type VerifiedDeposit } from '../../services/payment-links/deposit-evidence.js';
import type { LinkStatus } from '../../domain/states.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import type { ActivityDeps } from '../deps.js';
import { amountUnitOf, isScanned } from '../../rails/methods.js';
import { kesAtCount, type KesAtCount } from '../../domain/kes-value.js';


export type { Disposition, PaymentState, VerifiedDeposit };

/** At most this many deposits per pull (the workflow pulls again while `more`): a bounded history event. */
export const evidencePageSize = 50;
/** Rows looked at per pull, past which the rest waits for the next pull (rows that do not fit the link are skipped). */
const evidenceScanLimit = 1_000;

/** The recorded deposit as the workflow counts it; null (and a warning) when it does not fit the link. */
function verified(linkId: string, rail: RailId, row: DepositEvidenceRow): VerifiedDeposit | null {
  const checked = verifyRecordedDeposit(rail, row);
  if (checked && 'problem' in checked) {
    log.warn('recorded deposit does not fit the link; not counted', { linkId, rail, key: checked.key, problem: checked.problem });
    return null;
  }
  return checked?.deposit ?? null;
}

/** Refuses (non-retryable) a simulated payment on a live link (services/payment-links/deposit-evidence.ts). */
async function refuseSimulatedOnLive(db: CommonQueryMethods, linkId: string, report: PaymentReport): Promise<void> {
  const problem = await simulatedOnLiveProblem(db, linkId, report);
  if (problem) throw ApplicationFailure.nonRetryable(problem, 'SimulatedOnLive');
}

/**
 * Activities that write the payment-link read model. Each is idempotent: a status update only
 * applies from the expected states (re-running it changes nothing), payments upsert on their
 * key, and the confirmation event is deduplicated by link id.
 */
export function createLinkActivities(deps: Pick<ActivityDeps, 'pool' | 'config' | 'metrics' | 'rates'>) {
  const { pool, rates } = deps;
  /**
   * A payment's KES value now, as it is counted (docs/reports.md): KES as is, USDT at the rates
   * service's rate for the link's environment. No rate (sources down or in disagreement): null
   * with the reason; counting the payment never waits or fails for it.
   */
  async function kesNow(linkId: string, report: PaymentReport): Promise<KesAtCount> {
    const currency = amountUnitOf(report.rail);
    const payment = { currency, amountMinor: report.amountMinor, decimals: report.decimals };
    if (currency === 'KES') return kesAtCount(payment, { unavailable: '' });
    if (!rates) return kesAtCount(payment, { unavailable: 'no rates service in this worker' });
    try {
      const link = await findLinkById(pool, linkId);
      const rate = await rates.kesPerUsdt(link?.environment ?? 'live');
      return kesAtCount(payment, rate);
    } catch (err) {
      return kesAtCount(payment, { unavailable: `no KES rate at count time: ${(err as Error).message}` });
    }
  }
  return {
    async setLinkStatus(input: { linkId: string; from: LinkStatus[]; to: LinkStatus }): Promise<boolean> {
      const moved = await moveLinkStatus(pool, input.linkId, input.from, input.to);
      if (moved && deps.metrics && (input.to === 'EXPIRED' || input.to === 'CANCELLED')) await countEnded(pool, deps.metrics, input.linkId, input.to);
      return moved;
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
      const kes = input.state === 'confirmed' ? await kesNow(input.linkId, input.report) : undefined;
      await pool.transaction(async (tx) => {
        await refuseSimulatedOnLive(tx, input.linkId, input.report);
        await upsertPayment(tx, input.linkId, { ...input, kes });
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
      const kes = await kesNow(input.linkId, input.report);
      return pool.transaction(async (tx) => {
        await refuseSimulatedOnLive(tx, input.linkId, input.report);
        await upsertPayment(tx, input.linkId, { report: input.report, state: 'confirmed', disposition: input.disposition, kes });
        const moved = await markLinkConfirmed(tx, input.linkId, input.from, { report: input.report, confirmedAt: input.confirmedAt, receivedMicro: input.receivedMicro });
        const row = (await findLinkById(tx, input.linkId))!;
        const payments = await listLinkPayments(tx, input.linkId);
        // Counted when this call confirmed it; recorded before the commit, so a failed commit may count one that a retry counts again.
        if (moved) countConfirmed(deps.metrics, row, payments, input.report.rail, input.confirmedAt);
        const invoice = row.kind === 'invoice';
        const data = invoice
          ? invoiceDto((await findInvoiceView(tx, input.linkId))!)
          : paymentLinkDetailDto(row, payments, deps.config);
        const type = invoice ? 'invoice.paid' : 'payment_link.confirmed';
        const event = await insertEvent(tx, {
          storeId: row.store_id,
          environment: row.environment,
          type,
          dedupeKey: `${type}:${input.linkId}`,
          data,
          createdAt: input.confirmedAt,
          // The relay sends it from another process: its attempts keep this request's correlation id and trace.
          origin: eventOrigin(),
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
      if (!at || !isScanned(input.rail)) return null;
      const row = await findLinkDeposit(pool, input.linkId, input.rail, at.txHash, at.logIndex);
      return row ? verified(input.linkId, input.rail, row) : null;
    },

    /**
     * The second path to every deposit: what the chain watchers (or the reconciler) recorded for
     * this link and the link has not acted on yet, whether or not a signal ever reached its
     * workflow (one that did not exist yet, a hint lost on the way). Read by the workflow when it
     * starts, when it wakes and before it expires or ends; see `pendingLinkDeposits`. Each is
     * verified as `verifyDeposit` verifies a hinted one.
     */
    async pendingEvidence(input: { linkId: string }): Promise<{ deposits: VerifiedDeposit[]; more: boolean }> {
      const deposits: VerifiedDeposit[] = [];
      let after: { blockNumber: string; txHash: string; logIndex: number } | undefined;
      for (let scanned = 0; scanned < evidenceScanLimit; ) {
        const rows = await pendingLinkDeposits(pool, input.linkId, evidencePageSize, after);
        for (const row of rows) {
          const d = verified(input.linkId, row.rail as RailId, row);
          if (d) deposits.push(d);
          if (deposits.length === evidencePageSize) return { deposits, more: true };
        }
        if (rows.length < evidencePageSize) return { deposits, more: false };
        scanned += rows.length;
        const last = rows[rows.length - 1]!;
        after = { blockNumber: last.block_number, txHash: last.tx_hash, logIndex: last.log_index };
      }
      return { deposits, more: true };
    },

    /** The watch window is over: chain watchers stop matching this link's addresses. */
    async stopWatchingLink(input: { linkId: string }): Promise<void> {
      await stopWatchingOwner(pool, input.linkId);
    },
  };
}

export type LinkActivities = ReturnType<typeof createLinkActivities>;

/** An expired or cancelled link, counted under each rail it offered. */
async function countEnded(pool: CommonQueryMethods, metrics: Metrics, linkId: string, to: 'EXPIRED' | 'CANCELLED'): Promise<void> {
  const row = await findLinkById(pool, linkId);
  if (!row) return;
  for (const rail of row.enabled_rails) metrics.link(to === 'EXPIRED' ? 'expired' : 'cancelled', rail, row.environment);
}

/** A confirmation: its rail, and the times from creation and from the first evidence recorded for the link. */
function countConfirmed(metrics: Metrics | undefined, row: LinkRow, payments: readonly LinkPaymentRow[], rail: string, confirmedAt: string): void {
  if (!metrics) return;
  const confirmedMs = Date.parse(confirmedAt);
  const firstEvidenceMs = Math.min(...payments.map((p) => Date.parse(p.created_at)));
  metrics.link('confirmed', rail, row.environment);
  metrics.linkConfirmedAfter(rail, (confirmedMs - Date.parse(row.created_at)) / 1000, Number.isFinite(firstEvidenceMs) ? (confirmedMs - firstEvidenceMs) / 1000 : undefined);
}
