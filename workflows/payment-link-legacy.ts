import type { PaymentReport } from '../domain/workflow-contract.js';
import { mobileMoney, type PromptBook, type PromptOutcomes } from './mobile-money-prompts.js';
import { onConfirmed, onSeen, promptOutcomes, settleFailure } from './payment-link-payments.js';
import type { LinkRun, Message } from './payment-link-run.js';

/**
 * The link workflow's branches kept only so that histories recorded before a patch replay
 * unchanged (payment-link-patches.ts has the patch ids). Never change them: a history that takes
 * them must see the same commands. workflows/README.md ("Legacy branches") says when each may go.
 *
 * Before `signals-are-hints`: a signal's report was believed as sent, and an M-Pesa callback
 * claiming success was confirmed once the STK query agreed.
 */

// ---- Before `signals-are-hints`: kept unchanged so histories recorded then replay. ----

/** A message handled the pre-patch way: the report in the signal counted as evidence. */
export async function handleTrusted(run: LinkRun, m: Message): Promise<void> {
  if (m.kind === 'confirmed') {
    return run.isPrompted(m.report.rail) && !m.report.simulated ? verifyCallbackLegacy(run.promptBook, m.report, promptOutcomes(run)) : onConfirmed(run, m.report);
  }
  if (m.kind === 'seen') return onSeen(run, m.report);
  if (m.kind === 'callback') return;
  return settleFailure(run, m.key, m.kind, m.kind === 'failed' ? m.reason : 'dropped by a chain reorganisation');
}

/** A callback claiming success was believed once the STK query agreed. */
async function verifyCallbackLegacy(book: PromptBook, report: PaymentReport, o: PromptOutcomes): Promise<void> {
  if (o.paymentState(report.key) === 'confirmed') return;
  const answer = await mobileMoney.queryStkPush({ linkId: o.linkId, checkoutRequestId: report.key });
  if (answer.status === 'succeeded') return o.confirmed(report);
  if (answer.status === 'failed') return o.failed(report.key, answer.reason ?? 'M-Pesa reported the payment failed.');
  const check = book.checks.get(report.key);
  if (answer.status === 'pending' && check) {
    check.callbackReport = report;
    check.dueAtMs = Math.min(check.dueAtMs, Date.now() + book.delaysMs[0]!);
  }
}

/** Prompts past their check time, asked with the plain STK query (no stored callbacks, no retries). */
export async function checkOverdueLegacy(book: PromptBook, o: PromptOutcomes): Promise<void> {
  for (const [key, check] of book.checks) {
    if (o.paymentState(key) !== 'initiated') {
      book.checks.delete(key);
      continue;
    }
    if (Date.now() < check.dueAtMs) continue;
    const answer = await mobileMoney.queryStkPush({ linkId: o.linkId, checkoutRequestId: key });
    check.checks += 1;
    if (answer.status === 'succeeded') {
      await o.confirmed(check.callbackReport ?? { rail: o.promptRail, key, externalId: key, payer: check.phone, amountMinor: String(o.mobileMoneyAmount ?? 0), decimals: 0 });
    } else if (answer.status === 'failed') {
      await o.failed(key, answer.reason ?? 'M-Pesa reported the payment failed.');
    } else if (check.checks >= book.delaysMs.length) {
      await o.failed(key, 'M-Pesa never reported an outcome for this prompt.');
    } else {
      check.dueAtMs = Date.now() + book.delaysMs[check.checks]!;
      continue;
    }
    book.checks.delete(key);
  }
}

// ---- end of the pre-patch code ----
