import { patched, upsertSearchAttributes } from '@temporalio/workflow';
import { amountInLinkUnits, eventAfterFailure, hasPaymentInFlight, judgeConfirmed } from '../domain/link-accounting.js';
import { searchAttributes } from '../domain/search-attributes.js';
import type { PaymentReport } from '../domain/workflow-contract.js';
import type { PromptOutcomes } from './mobile-money-prompts.js';
import { outboxRelayPatch } from './payment-link-patches.js';
import { db, type LinkRun } from './payment-link-run.js';

/**
 * Counting a link's payments: the accounting's verdicts (domain/link-accounting.ts) applied to the
 * link, each written to the read model by an activity, under the lock its caller holds.
 */

/** A deposit included but not yet at depth: PENDING → PROCESSING. Seen once, or again after a reorg dropped it. */
export async function onSeen(run: LinkRun, report: PaymentReport): Promise<void> {
  // A deposit dropped by a reorg and included again is seen again; anything else only once.
  const known = run.payments.get(report.key);
  if (known && known.state !== 'dropped') return;
  run.payments.set(report.key, { rail: report.rail, state: 'seen', disposition: null, micro: 0n });
  await db.recordPayment({ linkId: run.linkId, report, state: 'seen', disposition: null });
  if (run.status === 'PENDING') await run.moveTo('payment_seen');
}

/** A payment confirmed by its evidence: counted once, and the link confirmed when it covers the amount due. */
export async function onConfirmed(run: LinkRun, report: PaymentReport): Promise<void> {
  const known = run.payments.get(report.key);
  if (known?.state === 'confirmed') return;
  const currency = run.currencyOf(report.rail);
  const micro = amountInLinkUnits(currency, report.amountMinor, report.decimals);
  run.payments.set(report.key, { rail: report.rail, state: 'confirmed', disposition: null, micro });
  const entry = run.payments.get(report.key)!;
  const verdict = judgeConfirmed(run.status, currency, run.counted(), run.terms);
  entry.disposition = verdict.disposition;
  if (verdict.kind === 'settled') {
    await db.recordPayment({ linkId: run.linkId, report, state: 'confirmed', disposition: verdict.disposition });
    return;
  }
  if (verdict.kind === 'underpaid') {
    await db.recordPayment({ linkId: run.linkId, report, state: 'confirmed', disposition: 'underpaid', receivedMicro: String(verdict.receivedUsdtMicro) });
    await settleOpenStatus(run);
    return;
  }
  const { eventId } = await db.confirmLink({
    linkId: run.linkId,
    report,
    from: [run.status],
    disposition: verdict.disposition,
    receivedMicro: String(verdict.receivedUsdtMicro),
    confirmedAt: report.at ?? new Date(Date.now()).toISOString(),
  });
  await run.moveTo(verdict.event, true);
  upsertSearchAttributes([{ key: searchAttributes.rail, value: report.rail }]);
  // The event committed with the confirmation; the outbox relay sends it. Old histories dispatched it here.
  if (!patched(outboxRelayPatch)) await run.webhooks.dispatchEvent({ eventId });
}

/** A payment that will not count: a failed M-Pesa prompt, or a deposit a reorganisation dropped. */
export async function settleFailure(run: LinkRun, key: string, state: 'failed' | 'dropped', reason: string, unanswered = false): Promise<void> {
  const p = run.payments.get(key);
  if (!p || p.state === 'confirmed' || p.state === 'failed' || p.state === 'dropped') return;
  p.state = state;
  if (unanswered) p.unanswered = true;
  await db.recordPayment({
    linkId: run.linkId,
    report: { rail: p.rail, key, externalId: key, payer: null, amountMinor: '0', decimals: run.decimalsOf(p.rail) },
    state,
    disposition: null,
    failureReason: reason,
  });
  await settleOpenStatus(run);
}

/** Back to PENDING once nothing is in flight, or to EXPIRED if the link's time ran out meanwhile. */
async function settleOpenStatus(run: LinkRun): Promise<void> {
  const event = eventAfterFailure(run.status, hasPaymentInFlight(run.counted()), Date.now(), run.windows.expiresAtMs);
  if (event) await run.moveTo(event);
}

/** How the prompt book settles a prompt: through this link's own accounting. */
export function promptOutcomes(run: LinkRun): PromptOutcomes {
  return {
    linkId: run.linkId,
    promptRail: run.promptRail,
    mobileMoneyAmount: run.input.mobileMoneyAmount,
    paymentState: (key) => run.payments.get(key)?.state,
    confirmed: (report) => onConfirmed(run, report),
    failed: (key, reason, unanswered) => settleFailure(run, key, 'failed', reason, unanswered),
    watchEndsAtMs: () => run.watchEndsAtMs(),
  };
}
