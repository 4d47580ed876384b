import { log, patched } from '@temporalio/workflow';
import type { VerifiedDeposit } from '../activities/links/index.js';
import type { RailId } from '../domain/rails.js';
import type { PaymentReport } from '../domain/workflow-contract.js';
import { handleTrusted, checkOverdueLegacy } from './payment-link-legacy.js';
import { signalsAreHintsPatch } from './payment-link-patches.js';
import { onConfirmed, onSeen, promptOutcomes, settleFailure } from './payment-link-payments.js';
import { db, type LinkRun, type Message } from './payment-link-run.js';

/**
 * Evidence: what makes a payment count. Signals are hints (their rail and key say which evidence
 * to read, nothing else in them is believed); chain deposits are read from what the watcher
 * recorded (`verifyDeposit`, `pendingEvidence`), M-Pesa prompts are settled by the STK query.
 */

/** Pulls in a row at most (each bounded by the activity's page): the rest waits for the next wake. */
const maxPullPages = 20;

/** The only parts of a signal the workflow believes: which rail, and the key of the evidence to read. */
export function hintOf(run: LinkRun, m: Message): { rail: RailId; key: string } | null {
  const raw = m.kind === 'seen' || m.kind === 'confirmed' ? (m.report as Partial<PaymentReport> | undefined) : m;
  const rail = m.kind === 'callback' ? run.promptRail : (raw as { rail?: unknown } | undefined)?.rail;
  const key = (raw as { key?: unknown } | undefined)?.key;
  // A rail is known by the link's terms or the built-in registry (LinkRun.termsOf).
  if (typeof rail !== 'string' || !run.termsOf(rail) || typeof key !== 'string' || key.length === 0 || key.length > 200) return null;
  return { rail: rail as RailId, key };
}

/** One message from the inbox, under the lock: a hint, or (histories before `signals-are-hints`) a trusted report. */
export const handleMessage = (run: LinkRun, m: Message): Promise<void> =>
  patched(signalsAreHintsPatch) ? handleHint(run, m) : handleTrusted(run, m);

/** The due M-Pesa prompts, under the lock: settled from evidence (or, before `signals-are-hints`, queried the old way). */
export const checkPrompts = (run: LinkRun): Promise<void> =>
  patched(signalsAreHintsPatch) ? run.promptBook.settleDue(promptOutcomes(run)) : checkOverdueLegacy(run.promptBook, promptOutcomes(run));

/**
 * Every signal is a hint: its rail and key say which evidence to read, nothing else in it is
 * believed. Chain signals are settled by the deposit the watcher recorded (its state, amount,
 * address and units, checked by `verifyDeposit`); M-Pesa ones by the STK query.
 */
async function handleHint(run: LinkRun, m: Message): Promise<void> {
  const hint = hintOf(run, m);
  if (!hint) return void log.warn('A malformed signal was ignored', { linkId: run.linkId, kind: m.kind });
  if (run.isPrompted(hint.rail)) return run.promptBook.requestCheck(hint.key, promptOutcomes(run));
  // Pulling: the hint only wakes the workflow, which reads everything recorded for it once the inbox is drained.
  if (run.pulls) return void (run.pullWanted = true);
  const evidence = await db.verifyDeposit({ linkId: run.linkId, rail: hint.rail, key: hint.key });
  if (!evidence) return void log.warn('A signal named no recorded deposit of this link; ignored', { linkId: run.linkId, ...hint });
  return applyEvidence(run, evidence);
}

const applyEvidence = (run: LinkRun, evidence: VerifiedDeposit): Promise<void> => {
  if (evidence.state === 'seen') return onSeen(run, evidence.report);
  if (evidence.state === 'confirmed') return onConfirmed(run, evidence.report);
  return settleFailure(run, evidence.report.key, 'dropped', 'dropped by a chain reorganisation');
};

/**
 * Reads what was recorded for this link and is not yet counted, and counts it: the path to a
 * deposit that no signal needs. Under the lock. Links with no chain rail have nothing to read.
 */
export async function pullEvidence(run: LinkRun): Promise<void> {
  run.pullWanted = false;
  run.lastPullMs = Date.now();
  if (!run.input.enabledRails.some((r) => !run.isPrompted(r))) return;
  for (let page = 0; page < maxPullPages; page++) {
    const { deposits, more } = await db.pendingEvidence({ linkId: run.linkId });
    for (const d of deposits) await applyEvidence(run, d);
    if (!more || deposits.length === 0) return;
  }
}

/** The last look before the link closes, under the lock: what was recorded for it, and every prompt left without an outcome. */
export async function closingLook(run: LinkRun): Promise<void> {
  await pullEvidence(run);
  const unanswered = [...run.payments.entries()].filter(([, p]) => run.isPrompted(p.rail) && p.unanswered && p.state === 'failed').map(([key]) => key);
  for (const key of unanswered) run.payments.get(key)!.unanswered = false;
  await run.promptBook.askUnansweredOnce(unanswered, promptOutcomes(run));
}
