import { findLinkRecords, type LinkRecordRows } from '../../db/link-timeline-repo.js';
import { findLinkWithPayments } from '../../db/payment-link-repo.js';
import { notFound } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import { formatUnits } from '../../domain/money.js';
import { paymentLinkWorkflowId } from '../../domain/workflow-contract.js';
import { fetchLinkHistory } from '../../temporal-client/link-history.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { paymentLinkDetailDto } from './dto.js';
import { mergeTimeline, recordEntries, workflowEntries, type LinkRecords, type TimelineEntry } from './timeline.js';

/** A page must not wait on a Temporal that cannot answer: past this, the timeline shows the records only. */
const historyDeadlineMs = 2_500;

export interface LinkDetail {
  link: ReturnType<typeof paymentLinkDetailDto>;
  timeline: TimelineEntry[];
  /** Why the workflow's side of the timeline is missing, when it is; null when it is shown. */
  engineNote: string | null;
  workflowId: string;
  /** The Temporal namespace the workflow runs in (for a link to the Temporal UI). */
  namespace: string;
}

/**
 * One of the store's payment links with its timeline: the read model, merged with the workflow's
 * history when Temporal answers. Another store's link, or a malformed id, is a 404; a workflow not
 * started yet, or a Temporal that cannot be reached, leaves the records alone with a note.
 */
export async function getLinkDetail(deps: ServiceDeps, auth: StoreScope, id: string): Promise<LinkDetail> {
  if (!isId('paymentLink', id)) throw notFound('payment link');
  const found = await findLinkWithPayments(deps.pool, auth.storeId, auth.environment, id);
  if (!found) throw notFound('payment link');
  const link = paymentLinkDetailDto(found.row, found.payments, deps.config);
  const records = recordEntries(linkRecords(link, found.row.simulated, await findLinkRecords(deps.pool, id)));
  const { entries, note } = found.row.workflow_started ? await engineSide(deps, id) : notStarted;
  return { link, timeline: mergeTimeline(records, entries), engineNote: note, workflowId: paymentLinkWorkflowId(id), namespace: deps.temporal.options.namespace };
}

const notStarted = {
  entries: null,
  note: 'The workflow has not started yet: Temporal could not be reached when the link was created. The link is safe; the workers start its workflow as soon as Temporal answers.',
};

async function engineSide(deps: ServiceDeps, id: string): Promise<{ entries: TimelineEntry[] | null; note: string | null }> {
  try {
    const found = await fetchLinkHistory(deps.temporal, id, historyDeadlineMs);
    if (!found.found) return { entries: null, note: "Temporal no longer holds this workflow's history (past the namespace's retention): the timeline shows the stored records only." };
    return { entries: workflowEntries(found.history), note: null };
  } catch (err) {
    deps.logger?.warn({ err, linkId: id }, 'could not read the payment workflow history for the dashboard');
    return { entries: null, note: 'Temporal could not be reached: the timeline shows the stored records only, without the engine’s steps. Reload to try again.' };
  }
}

function linkRecords(link: LinkDetail['link'], simulated: boolean, rows: LinkRecordRows): LinkRecords {
  const amount = (minor: string | null, decimals: number | null) => (minor === null || decimals === null ? null : formatUnits(BigInt(minor), decimals));
  return {
    link: { createdAt: link.createdAt, status: link.status, expiresAt: link.expiresAt, confirmedAt: link.confirmedAt, confirmedRail: link.confirmedRail },
    prompts: rows.prompts.map((p) => ({
      attempt: p.attempt, state: p.state, phone: p.phone_number, amountKes: p.amount_kes,
      checkoutRequestId: p.checkout_request_id, failureMessage: p.failure_message, createdAt: p.created_at,
    })),
    callbacks: rows.callbacks.map((c) => ({
      checkoutRequestId: c.checkout_request_id, resultCode: c.result_code, resultDesc: c.result_desc,
      receipt: c.receipt, suspiciousReason: c.suspicious_reason, receivedAt: c.received_at,
    })),
    deposits: rows.deposits.map((d) => ({
      rail: d.rail, txHash: d.tx_hash, amount: amount(d.amount_minor, d.decimals) ?? '0', blockNumber: d.block_number,
      state: d.state, createdAt: d.created_at, updatedAt: d.updated_at,
    })),
    payments: rows.payments.map((p) => ({
      rail: p.rail, externalId: p.external_id, amount: amount(p.amount_minor, p.decimals), state: p.state, disposition: p.disposition,
      failureReason: p.failure_reason, createdAt: p.created_at, updatedAt: p.updated_at,
      // The workflow keys a simulated payment `sim_…`; only test links hold one.
      simulated: simulated && p.payment_key.startsWith('sim_'),
    })),
    event: rows.event && { id: rows.event.id, type: rows.event.type, createdAt: rows.event.created_at, dispatchedAt: rows.event.dispatched_at },
    deliveries: rows.deliveries.map((d) => ({
      attempt: d.attempt, endpointUrl: d.endpoint_url, status: d.status, responseStatus: d.response_status,
      latencyMs: d.latency_ms, error: d.error, trigger: d.trigger, createdAt: d.created_at,
    })),
  };
}
