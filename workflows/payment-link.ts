import { allHandlersFinished, condition, log, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import { isExpiring, wakeAtMs } from '../domain/link-deadlines.js';
import { isTerminal, type LinkStatus } from '../domain/states.js';
import type { PaymentLinkInput } from '../domain/workflow-contract.js';
import { checkPrompts, closingLook, handleMessage, pullEvidence } from './payment-link-evidence.js';
import { registerHandlers } from './payment-link-handlers.js';
import { db, LinkRun } from './payment-link-run.js';

/** Past this many events (or when Temporal suggests it) the workflow continues as new, carrying its state. */
const defaultHistoryEventLimit = 10_000;

/**
 * One payment link (or invoice): the spec's state machine PENDING → PROCESSING → CONFIRMED, or
 * EXPIRED or CANCELLED (domain/states.ts), run by one loop. While open, the loop waits for a
 * signal, a prompt to check, an evidence pull or the deadline, and handles it under the lock that
 * updates take too; at the deadline it expires the link. Once settled it keeps recording late and
 * double payments until the watch window closes, takes a last look, stops watching the link's
 * addresses and ends. The parts: payment-link-run.ts (state, lock, transitions),
 * -payments.ts (accounting), -evidence.ts (hints, pulls, prompts), -handlers.ts (signals,
 * updates, query), -legacy.ts (branches for old histories); workflows/README.md.
 */
export async function paymentLink(input: PaymentLinkInput): Promise<LinkStatus> {
  const run = new LinkRun(input);
  registerHandlers(run);
  // What was recorded before this run began (a deposit told while the workflow did not exist yet).
  if (run.pulls) await run.withLock(() => pullEvidence(run));

  for (;;) {
    const now = Date.now();
    await expireAtDeadline(run, now);
    const wakeAt = wakeAtMs(run.status, run.terminalAtMs, run.windows);
    if (isTerminal(run.status) && now >= wakeAt && run.inbox.length === 0 && run.promptBook.size === 0) {
      // The watch window closed: end, after one last look (runs that pull) that found nothing new.
      if (!run.pulls || run.closingLookTaken) break;
      await takeClosingLook(run);
      continue;
    }
    const nextPullMs = run.pulls && !isTerminal(run.status) ? run.lastPullMs + run.evidencePullMs : Infinity;
    await waitForWork(run, now, Math.min(wakeAt, run.promptBook.nextDueMs(), nextPullMs));
    await doWork(run, nextPullMs);
    await continueAsNewIfLong(run);
  }
  await db.stopWatchingLink({ linkId: input.linkId });
  return run.status;
}

/** PENDING → EXPIRED at `expiresAt`; PROCESSING → EXPIRED when the late window after it ends. */
async function expireAtDeadline(run: LinkRun, now: number): Promise<void> {
  // Before a link expires it reads its evidence once more: a deposit recorded in time counts in time.
  if (run.pulls && isExpiring(run.status, now, run.windows)) await run.withLock(() => pullEvidence(run));
  for (const when of ['PENDING', 'PROCESSING'] as const) {
    // Checked again under the lock: an update holding it may have settled the link meanwhile.
    if (run.status === when && isExpiring(when, now, run.windows)) {
      await run.withLock(async () => (run.status === when ? run.moveTo('expired') : undefined));
    }
  }
}

/** The last look: something counted at it (a late payment) opens its own late window, with another look at its end. */
async function takeClosingLook(run: LinkRun): Promise<void> {
  run.closingLookTaken = true;
  const before = run.progress();
  await run.withLock(() => closingLook(run));
  if (run.progress() !== before) run.closingLookTaken = false;
}

/** Sleeps until a message, a new prompt or (pulling runs) a status an update moved, or until `untilMs`. */
async function waitForWork(run: LinkRun, now: number, untilMs: number): Promise<void> {
  // Pulling runs also wake when an update moves the status (a cancel: its late window starts now).
  const waitedIn = run.status;
  await condition(() => run.inbox.length > 0 || run.promptAdded || (run.pulls && run.status !== waitedIn), Math.max(1, untilMs - now));
  run.promptAdded = false;
}

/** The signals in the inbox one at a time, then the due prompts, then a pull if a hint or the clock asks for one. */
async function doWork(run: LinkRun, nextPullMs: number): Promise<void> {
  while (run.inbox.length > 0) {
    const m = run.inbox.shift()!;
    run.closingLookTaken = false;
    await run.withLock(() => handleMessage(run, m));
  }
  if (run.promptBook.size > 0) await run.withLock(() => checkPrompts(run));
  if (run.pulls && (run.pullWanted || Date.now() >= nextPullMs)) await run.withLock(() => pullEvidence(run));
}

/**
 * Keeps the history bounded: a link that keeps receiving deposits or callbacks (dust payments,
 * a looping client) continues as new with its state before Temporal's limits are near. Only
 * between messages, with no handler running, so nothing in flight is lost.
 */
async function continueAsNewIfLong(run: LinkRun): Promise<void> {
  const info = workflowInfo();
  if (info.historyLength < (run.input.historyEventLimit ?? defaultHistoryEventLimit) && !info.continueAsNewSuggested) return;
  await condition(allHandlersFinished);
  if (run.inbox.length > 0 || run.busy || run.promptAdded) return;
  const carried = run.carry();
  log.info('Continuing as new to keep the history short', { linkId: run.linkId, historyLength: info.historyLength });
  // The memo too (the correlation id, the state the UI shows): a new run starts with none otherwise.
  await makeContinueAsNewFunc<typeof paymentLink>({ typedSearchAttributes: info.typedSearchAttributes, ...(info.memo ? { memo: info.memo } : {}) })({ ...run.input, carried });
}
