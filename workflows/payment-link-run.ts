import { condition, patched, proxyActivities, setCurrentDetails, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import type { Disposition, LinkActivities } from '../activities/links/index.js';
import { linkTerms, type CountedPayment, type LinkCurrency, type LinkTerms } from '../domain/link-accounting.js';
import { linkStateLine, linkStateMemo } from '../domain/link-display.js';
import { watchEndsAtMs, type LinkWindows } from '../domain/link-deadlines.js';
import type { RailId } from '../domain/rails.js';
import { searchAttributes } from '../domain/search-attributes.js';
import { isTerminal, nextStatus, type LinkEvent, type LinkStatus } from '../domain/states.js';
import type { CarriedLinkState, LinkRailTerms, PaymentLinkInput, PaymentReport } from '../domain/workflow-contract.js';
import { defaultPromptRail, linkRailTerms } from '../rails/registry.js';
import { PromptBook } from './mobile-money-prompts.js';
import { exclusiveLockPatch, pullEvidencePatch, uiStatePatch } from './payment-link-patches.js';
import { webhookHandoverOptions } from './webhook-handover.js';

// Database writes retry quickly and without limit: PostgreSQL coming back is only a matter of time.
export const db = proxyActivities<LinkActivities>({
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** How often an open link reads its evidence when nothing wakes it. */
const defaultEvidencePullMs = 10 * 60_000;

/** A signal as it waits in the inbox: a hint until an activity has read the evidence it names. */
export type Message =
  | { kind: 'seen'; report: PaymentReport }
  | { kind: 'confirmed'; report: PaymentReport }
  | { kind: 'dropped'; rail: RailId; key: string }
  | { kind: 'failed'; rail: RailId; key: string; reason: string }
  | { kind: 'callback'; key: string };

/** One payment of the link as the workflow knows it; `micro` is in the link's units (micro-USDT, or whole KES). */
export interface LinkPayment {
  rail: RailId;
  state: string;
  disposition: Disposition | null;
  micro: bigint;
  /** A failed prompt M-Pesa never gave an outcome for: asked once more before the link closes. */
  unanswered?: boolean;
}


/**
 * The state of one run of a link's workflow: the link's status and payments, its prompts, the
 * inbox of signals and the lock that handlers and the main loop take one at a time. A run that
 * continued as new starts from the state the previous run carried over (`carry()`).
 */
export class LinkRun {
  readonly linkId: string;
  readonly terms: LinkTerms;
  readonly windows: LinkWindows;
  readonly evidencePullMs: number;
  status: LinkStatus;
  terminalAtMs: number;
  /** M-Pesa prompts sent so far (capped by `maxPromptsPerLink`). */
  prompts: number;
  readonly payments: Map<string, LinkPayment>;
  /** The M-Pesa prompts still to settle (workflows/mobile-money-prompts.ts). */
  readonly promptBook: PromptBook;
  readonly inbox: Message[] = [];
  /** Held by one handler (or the main loop) at a time. */
  busy = false;
  /** Set when a prompt is added, so the main loop re-arms its timer for the prompt's check. */
  promptAdded = false;
  /** Whether this run pulls its evidence (`pull-evidence`); decided once, at its first task. */
  readonly pulls: boolean;
  /** A chain hint arrived since the last pull. */
  pullWanted = false;
  lastPullMs = 0;
  /** The last look before the workflow ends was taken, and nothing has happened since. */
  closingLookTaken = false;
  /** Sends a confirmation's webhook event, on the deployment's webhooks task queue. */
  readonly webhooks: { dispatchEvent(i: { eventId: string }): Promise<void> };

  constructor(readonly input: PaymentLinkInput) {
    const carried = input.carried;
    this.linkId = input.linkId;
    this.status = carried?.status ?? 'PENDING';
    this.terminalAtMs = carried?.terminalAtMs ?? 0;
    this.prompts = carried?.prompts ?? 0;
    this.payments = new Map(
      (carried?.payments ?? []).map(([key, p]) => [key, { ...p, disposition: p.disposition as Disposition | null, micro: BigInt(p.micro) }]),
    );
    this.promptBook = new PromptBook(input.promptFirstCheckMs ?? 30_000, carried?.promptChecks);
    this.terms = linkTerms(input);
    this.windows = { expiresAtMs: input.expiresAtMs, lateWatchMs: input.lateWatchMinutes * 60_000 };
    this.pulls = patched(pullEvidencePatch);
    this.evidencePullMs = input.evidencePullMs ?? defaultEvidencePullMs;
    this.webhooks = proxyActivities<{ dispatchEvent(i: { eventId: string }): Promise<void> }>(webhookHandoverOptions(input.webhookTaskQueue));
    // The UI's current details (no command: every history replays as before).
    setCurrentDetails(linkStateLine(this.status, this.windows.expiresAtMs, this.watchEndsAtMs()));
  }

  /**
   * What the workflow knows of a rail: its input's terms (`railTerms`, set by the service for every
   * enabled rail, registered ones included), else the built-in registry's (histories recorded
   * before the field, or a signal naming a built-in rail the link does not offer). Undefined for
   * a rail neither knows: a hint naming it is ignored.
   */
  termsOf(rail: string): LinkRailTerms | undefined {
    return (this.input.railTerms && Object.hasOwn(this.input.railTerms, rail) ? this.input.railTerms[rail] : undefined) ?? linkRailTerms(rail as RailId);
  }

  /**
   * The currency a rail's payments count in: its token, KES on M-Pesa and USDT on every chain. A
   * rail this code does not know (a forged signal in a pre-patch history) counts as USDT, as it always has.
   */
  currencyOf(rail: RailId): LinkCurrency {
    return this.termsOf(rail)?.currency ?? 'USDT';
  }

  /** The decimals of a rail's amounts (undefined for a rail this code does not know, as it always was). */
  decimalsOf(rail: RailId): number {
    return this.termsOf(rail)?.decimals as number;
  }

  /** Whether the rail's payments are prompts (sent by `startMobileMoneyPayment`, settled by the STK query). */
  isPrompted(rail: RailId): boolean {
    return this.termsOf(rail)?.prompted === true;
  }

  /**
   * The rail the link's prompts are sent and recorded on: its enabled prompted rail, else the
   * registry's (M-Pesa), which the update's validator then refuses as not enabled.
   */
  get promptRail(): RailId {
    return (this.input.enabledRails.find((r) => this.isPrompted(r)) ?? defaultPromptRail()) as RailId;
  }

  /** Runs `fn` holding the lock: handlers and the main loop's steps run one at a time. */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    await condition(() => !this.busy);
    // One condition check releases every waiter at once: each takes the lock only if it is still free.
    if (patched(exclusiveLockPatch)) while (this.busy) await condition(() => !this.busy);
    this.busy = true;
    try {
      return await fn();
    } finally {
      this.busy = false;
    }
  }

  /**
   * Applies a transition of the state table; `persisted` when an activity already wrote it. The
   * workflow's own state moves first, so an update validated while the read model is being
   * written already sees it (a client that reads the new state and acts at once is never
   * refused); the lock, held by every caller, keeps handlers waiting until the write is done.
   */
  async moveTo(event: LinkEvent, persisted = false): Promise<void> {
    const from = this.status;
    const to = nextStatus(from, event);
    if (to === from) return;
    this.status = to;
    if (!persisted) await db.setLinkStatus({ linkId: this.linkId, from: [from], to });
    if (isTerminal(to)) this.terminalAtMs = Date.now();
    upsertSearchAttributes([{ key: searchAttributes.status, value: to }]);
    this.showState();
  }

  /**
   * What the Temporal UI shows without a query: the current details, and (patch `ui-state-memo`)
   * the memo, both saying the status and, once settled, until when late payments are watched;
   * that time is the `MalipoWatchUntil` search attribute too.
   */
  showState(): void {
    const watchEnds = this.watchEndsAtMs();
    setCurrentDetails(linkStateLine(this.status, this.windows.expiresAtMs, watchEnds));
    if (!patched(uiStatePatch)) return;
    upsertMemo(linkStateMemo(this.status, this.windows.expiresAtMs, watchEnds));
    if (isTerminal(this.status)) upsertSearchAttributes([{ key: searchAttributes.watchUntil, value: new Date(watchEnds) }]);
  }

  /** When the workflow stops watching: the late window after expiry, or after a terminal state. */
  watchEndsAtMs(): number {
    return watchEndsAtMs(this.status, this.terminalAtMs, this.windows);
  }

  /** The payments as the accounting (domain/link-accounting.ts) counts them. */
  counted(): CountedPayment[] {
    return [...this.payments.values()].map((p) => ({ currency: this.currencyOf(p.rail), state: p.state, amount: p.micro }));
  }

  /** How many payments counted: a closing look that changes it (or the status) opens another late window. */
  progress(): string {
    return `${this.status}:${[...this.payments.values()].filter((p) => p.state === 'confirmed').length}`;
  }

  /** What this run hands the next when it continues as new (money as strings). */
  carry(): CarriedLinkState {
    return {
      status: this.status,
      terminalAtMs: this.terminalAtMs,
      prompts: this.prompts,
      payments: [...this.payments.entries()].map(([key, p]) => [key, { ...p, micro: String(p.micro) }]),
      promptChecks: this.promptBook.carry(),
    };
  }
}
