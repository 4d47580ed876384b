import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  makeContinueAsNewFunc,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { LinkActivities, Disposition, VerifiedDeposit } from '../activities/links/index.js';
import { coversDue, fromMicro, toMicro } from '../domain/money.js';
import { maxPromptsPerLink } from '../domain/mpesa/prompt-limits.js';
import { isRailId, type RailId } from '../domain/rails.js';
import { railDecimals } from '../rails/registry.js';
import { searchAttributes } from '../domain/search-attributes.js';
import { isTerminal, nextStatus, type LinkEvent, type LinkStatus } from '../domain/states.js';
import {
  cancelLink,
  linkState,
  mobileMoneyCallback,
  paymentConfirmed,
  paymentDropped,
  paymentFailed,
  paymentSeen,
  simulatePayment,
  startMobileMoneyPayment,
  type CarriedLinkState,
  type PaymentLinkInput,
  type PaymentReport,
} from '../domain/workflow-contract.js';
import { mobileMoney, PromptBook, type PromptOutcomes } from './mobile-money-prompts.js';

// Database writes retry quickly and without limit: PostgreSQL coming back is only a matter of time.
const db = proxyActivities<LinkActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/**
 * Signals became hints settled by evidence (the recorded deposit, the STK query). Histories
 * recorded before this change replay their original decisions; every new decision, in old and
 * new workflows alike, takes the verified path. See workflows/README.md, "Changing a workflow".
 */
const evidencePatch = 'signals-are-hints';
/**
 * Before this patch, two handlers waiting for the lock were both let in by the same condition
 * check (a cancel and a prompt accepted in one workflow task ran side by side: the prompt rang on
 * a link the cancel had just closed). Histories recorded before it replay the old way.
 */
const exclusiveLockPatch = 'exclusive-handler-lock';
/**
 * The workflow pulls its evidence: it reads what was recorded for it (`pendingEvidence`) when it
 * starts, when a chain hint wakes it, every `evidencePullMs` while open, before it expires and
 * before it ends; and it asks M-Pesa once more about every prompt left without an outcome before
 * it ends. A deposit no longer depends on a signal having been delivered (a workflow that did not
 * exist yet when its deposit was told). Histories recorded before it replay without the pulls.
 */
const pullEvidencePatch = 'pull-evidence';
/** How often an open link reads its evidence when nothing wakes it. */
const defaultEvidencePullMs = 10 * 60_000;
/** Pulls in a row at most (each bounded by the activity's page): the rest waits for the next wake. */
const maxPullPages = 20;

type Message =
  | { kind: 'seen'; report: PaymentReport }
  | { kind: 'confirmed'; report: PaymentReport }
  | { kind: 'dropped'; rail: RailId; key: string }
  | { kind: 'failed'; rail: RailId; key: string; reason: string }
  | { kind: 'callback'; key: string };

/** The only parts of a signal the workflow believes: which rail, and the key of the evidence to read. */
function hintOf(m: Message): { rail: RailId; key: string } | null {
  const raw = m.kind === 'seen' || m.kind === 'confirmed' ? (m.report as Partial<PaymentReport> | undefined) : m;
  const rail = m.kind === 'callback' ? 'MOBILE_MONEY' : (raw as { rail?: unknown } | undefined)?.rail;
  const key = (raw as { key?: unknown } | undefined)?.key;
  if (!isRailId(rail) || typeof key !== 'string' || key.length === 0 || key.length > 200) return null;
  return { rail, key };
}

/** Past this many events (or when Temporal suggests it) the workflow continues as new, carrying its state. */
const defaultHistoryEventLimit = 10_000;

const rejected = (type: 'invalid_state' | 'rail_not_enabled' | 'prompt_limit', message: string) =>
  ApplicationFailure.create({ type, message: `${type}: ${message}`, nonRetryable: true });

/**
 * One payment link: its state machine, expiry timer, mobile-money prompt and payment
 * accounting. Outside events arrive as signals and are handled one at a time by the main loop;
 * updates take the same lock. After a terminal state the workflow keeps recording late and
 * double payments for `lateWatchMinutes`, then stops watching the link's addresses.
 */
export async function paymentLink(input: PaymentLinkInput): Promise<LinkStatus> {
  // A run that continued as new starts from the state the previous run carried over.
  const carried = input.carried;
  let status = carried?.status ?? ('PENDING' as LinkStatus);
  let terminalAtMs = carried?.terminalAtMs ?? 0;
  let busy = false;
  let prompts = carried?.prompts ?? 0;
  const inbox: Message[] = [];
  const payments = new Map<string, { rail: RailId; state: string; disposition: Disposition | null; micro: bigint; unanswered?: boolean }>(
    (carried?.payments ?? []).map(([key, p]) => [key, { ...p, disposition: p.disposition as Disposition | null, micro: BigInt(p.micro) }]),
  );
  /** The M-Pesa prompts still to settle (workflows/mobile-money-prompts.ts). */
  const promptBook = new PromptBook(input.promptFirstCheckMs ?? 30_000, carried?.promptChecks);
  /** Set when a prompt is added, so the main loop re-arms its timer for the prompt's check. */
  let promptAdded = false;
  const dueMicro = BigInt(input.usdtAmountMicro);
  const lateWatchMs = input.lateWatchMinutes * 60_000;
  /** Whether this run pulls its evidence (`pullEvidencePatch`); decided once, at its first task. */
  const pulls = patched(pullEvidencePatch);
  const evidencePullMs = input.evidencePullMs ?? defaultEvidencePullMs;
  /** A chain hint arrived since the last pull. */
  let pullWanted = false;
  let lastPullMs = 0;
  /** The last look before the workflow ends was taken, and nothing has happened since. */
  let closingLookTaken = false;

  const withLock = async <T>(fn: () => Promise<T>): Promise<T> => {
    await condition(() => !busy);
    // One condition check releases every waiter at once: each takes the lock only if it is still free.
    if (patched(exclusiveLockPatch)) while (busy) await condition(() => !busy);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  };

  /**
   * Applies a transition of the state table; `persisted` when an activity already wrote it. The
   * workflow's own state moves first, so an update validated while the read model is being
   * written already sees it (a client that reads the new state and acts at once is never
   * refused); the lock, held by every caller, keeps handlers waiting until the write is done.
   */
  const moveTo = async (event: LinkEvent, persisted = false): Promise<void> => {
    const from = status;
    const to = nextStatus(from, event);
    if (to === from) return;
    status = to;
    if (!persisted) await db.setLinkStatus({ linkId: input.linkId, from: [from], to });
    if (isTerminal(to)) terminalAtMs = Date.now();
    upsertSearchAttributes([{ key: searchAttributes.status, value: to }]);
  };

  const inFlight = () => [...payments.values()].some((p) => p.state === 'seen' || p.state === 'initiated');
  const receivedMicro = (rail: RailId) =>
    [...payments.values()]
      .filter((p) => p.state === 'confirmed' && (rail === 'MOBILE_MONEY') === (p.rail === 'MOBILE_MONEY'))
      .reduce((sum, p) => sum + p.micro, 0n);

  /** Back to PENDING once nothing is in flight, or to EXPIRED if the link's time ran out meanwhile. */
  const settleOpenStatus = async (): Promise<void> => {
    if (status !== 'PROCESSING' || inFlight()) return;
    await moveTo(Date.now() >= input.expiresAtMs ? 'expired' : 'payment_failed');
  };

  const onConfirmed = async (report: PaymentReport): Promise<void> => {
    const known = payments.get(report.key);
    if (known?.state === 'confirmed') return;
    const micro = report.rail === 'MOBILE_MONEY' ? BigInt(report.amountMinor) : toMicro(BigInt(report.amountMinor), report.decimals);
    payments.set(report.key, { rail: report.rail, state: 'confirmed', disposition: null, micro });
    const entry = payments.get(report.key)!;
    if (status === 'CONFIRMED' || status === 'CANCELLED') {
      entry.disposition = status === 'CONFIRMED' ? 'duplicate' : 'after_cancel';
      await db.recordPayment({ linkId: input.linkId, report, state: 'confirmed', disposition: entry.disposition });
      return;
    }
    const isMobile = report.rail === 'MOBILE_MONEY';
    const received = receivedMicro(report.rail);
    const due = isMobile ? BigInt(input.mobileMoneyAmount ?? 0) : dueMicro;
    // The read model's amountReceived counts USDT; M-Pesa payments are listed in KES on their own.
    const usdtReceived = isMobile ? receivedMicro('USDT_TRON') : received;
    if (!coversDue(received, due, isMobile ? 0 : input.underpaymentToleranceBps)) {
      entry.disposition = 'underpaid';
      await db.recordPayment({ linkId: input.linkId, report, state: 'confirmed', disposition: 'underpaid', receivedMicro: String(usdtReceived) });
      await settleOpenStatus();
      return;
    }
    const late = status === 'EXPIRED';
    entry.disposition = late ? 'late' : received > due ? 'overpaid' : 'payment';
    const { eventId } = await db.confirmLink({
      linkId: input.linkId,
      report,
      from: [status],
      disposition: entry.disposition,
      receivedMicro: String(isMobile ? usdtReceived : received),
      confirmedAt: report.at ?? new Date(Date.now()).toISOString(),
    });
    await moveTo(late ? 'late_payment_confirmed' : 'payment_confirmed', true);
    upsertSearchAttributes([{ key: searchAttributes.rail, value: report.rail }]);
    await dispatch(eventId);
  };

  const webhooks = proxyActivities<{ dispatchEvent(i: { eventId: string }): Promise<void> }>({
    taskQueue: input.webhookTaskQueue,
    // It makes the first attempt at each endpoint (each given 10 s) and heartbeats meanwhile.
    startToCloseTimeout: '30 seconds',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
  });
  const dispatch = (eventId: string) => webhooks.dispatchEvent({ eventId });

  /** A payment that will not count: a failed M-Pesa prompt, or a deposit a reorganisation dropped. */
  const settleFailure = async (key: string, state: 'failed' | 'dropped', reason: string, unanswered = false): Promise<void> => {
    const p = payments.get(key);
    if (!p || p.state === 'confirmed' || p.state === 'failed' || p.state === 'dropped') return;
    p.state = state;
    if (unanswered) p.unanswered = true;
    await db.recordPayment({
      linkId: input.linkId,
      report: { rail: p.rail, key, externalId: key, payer: null, amountMinor: '0', decimals: railDecimals[p.rail] },
      state,
      disposition: null,
      failureReason: reason,
    });
    await settleOpenStatus();
  };

  const onSeen = async (report: PaymentReport): Promise<void> => {
    // A deposit dropped by a reorg and included again is seen again; anything else only once.
    const known = payments.get(report.key);
    if (known && known.state !== 'dropped') return;
    payments.set(report.key, { rail: report.rail, state: 'seen', disposition: null, micro: 0n });
    await db.recordPayment({ linkId: input.linkId, report, state: 'seen', disposition: null });
    if (status === 'PENDING') await moveTo('payment_seen');
  };

  /** When the workflow stops watching: the late window after expiry, or after a terminal state. */
  const watchEndsAtMs = () =>
    isTerminal(status) ? Math.max(terminalAtMs, status === 'EXPIRED' ? input.expiresAtMs : 0) + lateWatchMs : input.expiresAtMs + lateWatchMs;

  /**
   * Every signal is a hint: its rail and key say which evidence to read, nothing else in it is
   * believed. Chain signals are settled by the deposit the watcher recorded (its state, amount,
   * address and units, checked by `verifyDeposit`); M-Pesa ones by the STK query.
   */
  const handleHint = async (m: Message): Promise<void> => {
    const hint = hintOf(m);
    if (!hint) return void log.warn('A malformed signal was ignored', { linkId: input.linkId, kind: m.kind });
    if (hint.rail === 'MOBILE_MONEY') return promptBook.requestCheck(hint.key, promptOutcomes);
    // Pulling: the hint only wakes the workflow, which reads everything recorded for it once the inbox is drained.
    if (pulls) return void (pullWanted = true);
    const evidence = await db.verifyDeposit({ linkId: input.linkId, rail: hint.rail, key: hint.key });
    if (!evidence) return void log.warn('A signal named no recorded deposit of this link; ignored', { linkId: input.linkId, ...hint });
    return applyEvidence(evidence);
  };

  const applyEvidence = (evidence: VerifiedDeposit): Promise<void> => {
    if (evidence.state === 'seen') return onSeen(evidence.report);
    if (evidence.state === 'confirmed') return onConfirmed(evidence.report);
    return settleFailure(evidence.report.key, 'dropped', 'dropped by a chain reorganisation');
  };

  /**
   * Reads what was recorded for this link and is not yet counted, and counts it: the path to a
   * deposit that no signal needs. Under the lock. Links with no chain rail have nothing to read.
   */
  const pullEvidence = async (): Promise<void> => {
    pullWanted = false;
    lastPullMs = Date.now();
    if (!input.enabledRails.some((r) => r !== 'MOBILE_MONEY')) return;
    for (let page = 0; page < maxPullPages; page++) {
      const { deposits, more } = await db.pendingEvidence({ linkId: input.linkId });
      for (const d of deposits) await applyEvidence(d);
      if (!more || deposits.length === 0) return;
    }
  };

  /** How the prompt book settles a prompt: through this link's own accounting. */
  const promptOutcomes: PromptOutcomes = {
    linkId: input.linkId,
    mobileMoneyAmount: input.mobileMoneyAmount,
    paymentState: (key) => payments.get(key)?.state,
    confirmed: (report) => onConfirmed(report),
    failed: (key, reason, unanswered) => settleFailure(key, 'failed', reason, unanswered),
    watchEndsAtMs,
  };

  // ---- Before `evidencePatch`: kept unchanged so histories recorded then replay. ----
  const handleTrusted = async (m: Message): Promise<void> => {
    if (m.kind === 'confirmed') {
      return m.report.rail === 'MOBILE_MONEY' && !m.report.simulated ? promptBook.verifyCallbackLegacy(m.report, promptOutcomes) : onConfirmed(m.report);
    }
    if (m.kind === 'seen') return onSeen(m.report);
    if (m.kind === 'callback') return;
    return settleFailure(m.key, m.kind, m.kind === 'failed' ? m.reason : 'dropped by a chain reorganisation');
  };
  // ---- end of the pre-patch code ----

  const handle = (m: Message): Promise<void> => (patched(evidencePatch) ? handleHint(m) : handleTrusted(m));
  const checkPrompts = (): Promise<void> => (patched(evidencePatch) ? promptBook.settleDue(promptOutcomes) : promptBook.checkOverdueLegacy(promptOutcomes));

  setHandler(paymentSeen, (report) => void inbox.push({ kind: 'seen', report }));
  setHandler(paymentConfirmed, (report) => void inbox.push({ kind: 'confirmed', report }));
  setHandler(paymentDropped, (hint) => void inbox.push({ kind: 'dropped', rail: hint?.rail, key: hint?.key }));
  setHandler(paymentFailed, (hint) => void inbox.push({ kind: 'failed', rail: hint?.rail, key: hint?.key, reason: hint?.reason }));
  setHandler(mobileMoneyCallback, (hint) => void inbox.push({ kind: 'callback', key: hint?.key }));
  setHandler(linkState, () => ({
    status,
    receivedMinorByRail: {},
    payments: [...payments.entries()].map(([key, p]) => ({ key, rail: p.rail, state: p.state, disposition: p.disposition })),
  }));

  const requirePromptAllowed = () => {
    if (prompts >= maxPromptsPerLink) {
      throw rejected('prompt_limit', `This payment link has had ${maxPromptsPerLink} M-Pesa prompts, the most one link takes; create a new link to try again.`);
    }
  };

  const requireOpen = (rail: RailId) => {
    if (!input.enabledRails.includes(rail)) throw rejected('rail_not_enabled', `${rail} is not enabled on this payment link.`);
    if (status !== 'PENDING') throw rejected('invalid_state', `The payment link is ${status}; it must be PENDING.`);
    if (Date.now() >= input.expiresAtMs) throw rejected('invalid_state', 'The payment link has expired.');
  };

  setHandler(
    startMobileMoneyPayment,
    ({ phoneNumber }) =>
      withLock(async () => {
        requireOpen('MOBILE_MONEY');
        requirePromptAllowed();
        prompts += 1;
        const sent = await mobileMoney.sendStkPush({
          linkId: input.linkId,
          storeId: input.storeId,
          environment: input.environment,
          phoneNumber,
          amountKes: input.mobileMoneyAmount ?? 0,
          accountReference: (input.merchantRef ?? input.linkId).slice(0, 12),
          description: 'Payment',
          attempt: `${input.linkId}:prompt:${prompts}`,
        });
        const key = sent.checkoutRequestId;
        payments.set(key, { rail: 'MOBILE_MONEY', state: 'initiated', disposition: null, micro: 0n });
        promptBook.add(key, phoneNumber);
        promptAdded = true;
        await db.recordPayment({
          linkId: input.linkId,
          report: { rail: 'MOBILE_MONEY', key, externalId: key, payer: phoneNumber, amountMinor: String(input.mobileMoneyAmount ?? 0), decimals: 0 },
          state: 'initiated',
          disposition: null,
        });
        if (status === 'PENDING') await moveTo('prompt_sent');
        return { ok: true as const, checkoutRequestId: key };
      }),
    {
      validator: (_request) => {
        requireOpen('MOBILE_MONEY');
        requirePromptAllowed();
      },
    },
  );

  setHandler(
    cancelLink,
    () =>
      withLock(async () => {
        if (status !== 'PENDING') throw rejected('invalid_state', `The payment link is ${status}; only a PENDING link can be cancelled.`);
        await moveTo('cancelled');
        return { status };
      }),
    {
      validator: () => {
        if (status !== 'PENDING') throw rejected('invalid_state', `The payment link is ${status}; only a PENDING link can be cancelled.`);
      },
    },
  );

  setHandler(
    simulatePayment,
    ({ rail }) =>
      withLock(async () => {
        // The validator refuses live links already; a handler never trusts that it ran.
        if (input.environment !== 'test') throw rejected('invalid_state', 'Simulated payments exist only in the test environment.');
        requireOpen(rail);
        const isMobile = rail === 'MOBILE_MONEY';
        const id = uuid4().replace(/-/g, '');
        await onConfirmed({
          rail,
          key: `sim_${id}`,
          externalId: isMobile ? `SIM${id.slice(0, 7).toUpperCase()}` : `0x${id}${id}`,
          payer: isMobile ? '254700000000' : null,
          amountMinor: isMobile ? String(input.mobileMoneyAmount ?? 0) : String(fromMicro(dueMicro, railDecimals[rail])),
          decimals: railDecimals[rail],
          simulated: true,
        });
        return { status };
      }),
    {
      validator: ({ rail }) => {
        if (input.environment !== 'test') throw rejected('invalid_state', 'Simulated payments exist only in the test environment.');
        requireOpen(rail);
      },
    },
  );

  /**
   * Keeps the history bounded: a link that keeps receiving deposits or callbacks (dust payments,
   * a looping client) continues as new with its state before Temporal's limits are near. Only
   * between messages, with no handler running, so nothing in flight is lost.
   */
  const continueAsNewIfLong = async (): Promise<void> => {
    const info = workflowInfo();
    if (info.historyLength < (input.historyEventLimit ?? defaultHistoryEventLimit) && !info.continueAsNewSuggested) return;
    await condition(allHandlersFinished);
    if (inbox.length > 0 || busy || promptAdded) return;
    const state: CarriedLinkState = {
      status,
      terminalAtMs,
      prompts,
      payments: [...payments.entries()].map(([key, p]) => [key, { ...p, micro: String(p.micro) }]),
      promptChecks: promptBook.carry(),
    };
    log.info('Continuing as new to keep the history short', { linkId: input.linkId, historyLength: info.historyLength });
    await makeContinueAsNewFunc<typeof paymentLink>({ typedSearchAttributes: info.typedSearchAttributes })({ ...input, carried: state });
  };

  /** The last look before the link closes: what was recorded for it, and every prompt left without an outcome. */
  const closingLook = async (): Promise<void> => {
    await pullEvidence();
    const unanswered = [...payments.entries()].filter(([, p]) => p.rail === 'MOBILE_MONEY' && p.unanswered && p.state === 'failed').map(([key]) => key);
    for (const key of unanswered) payments.get(key)!.unanswered = false;
    await promptBook.askUnansweredOnce(unanswered, promptOutcomes);
  };

  // What was recorded before this run began (a deposit told while the workflow did not exist yet).
  if (pulls) await withLock(pullEvidence);

  // The main loop: handle messages one at a time; expire at the deadline; after a terminal state
  // keep recording late payments until the watch window closes.
  for (;;) {
    const now = Date.now();
    const expiring = (when: LinkStatus, deadlineMs: number) => status === when && now >= deadlineMs;
    // Before a link expires it reads its evidence once more: a deposit recorded in time counts in time.
    if (pulls && (expiring('PENDING', input.expiresAtMs) || expiring('PROCESSING', input.expiresAtMs + lateWatchMs))) await withLock(pullEvidence);
    // Checked again under the lock: an update holding it may have settled the link meanwhile.
    const expireIf = (when: LinkStatus, deadlineMs: number) =>
      expiring(when, deadlineMs) ? withLock(async () => (status === when ? moveTo('expired') : undefined)) : undefined;
    await expireIf('PENDING', input.expiresAtMs);
    await expireIf('PROCESSING', input.expiresAtMs + lateWatchMs);
    const wakeAtMs = status === 'PENDING' ? input.expiresAtMs : watchEndsAtMs();
    if (isTerminal(status) && now >= wakeAtMs && inbox.length === 0 && promptBook.size === 0) {
      if (!pulls || closingLookTaken) break;
      closingLookTaken = true;
      const before = `${status}:${[...payments.values()].filter((p) => p.state === 'confirmed').length}`;
      await withLock(closingLook);
      // Something counted at the last look (a late payment): its own late window starts, with another look at its end.
      if (`${status}:${[...payments.values()].filter((p) => p.state === 'confirmed').length}` !== before) closingLookTaken = false;
      continue;
    }
    const nextPullMs = pulls && !isTerminal(status) ? lastPullMs + evidencePullMs : Infinity;
    // Pulling runs also wake when an update moves the status (a cancel: its late window starts now).
    const waitedIn = status;
    await condition(
      () => inbox.length > 0 || promptAdded || (pulls && status !== waitedIn),
      Math.max(1, Math.min(wakeAtMs, promptBook.nextDueMs(), nextPullMs) - now),
    );
    promptAdded = false;
    while (inbox.length > 0) {
      const m = inbox.shift()!;
      closingLookTaken = false;
      await withLock(() => handle(m));
    }
    if (promptBook.size > 0) await withLock(checkPrompts);
    if (pulls && (pullWanted || Date.now() >= nextPullMs)) await withLock(pullEvidence);
    await continueAsNewIfLong();
  }
  await db.stopWatchingLink({ linkId: input.linkId });
  return status;
}
