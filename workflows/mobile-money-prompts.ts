import { log, proxyActivities } from '@temporalio/workflow';
import type { MobileMoneyActivities, PromptSettlement } from '../activities/mpesa/index.js';
import { mobileMoneyActivityOptions } from '../activities/mpesa/options.js';
import type { RailId } from '../domain/rails.js';
import type { PaymentReport } from '../domain/workflow-contract.js';

// The operator is called at most a few times: a prompt on the customer's phone must not repeat
// (the activity also refuses to resend when an earlier attempt's outcome is unknown).
export const mobileMoney = proxyActivities<MobileMoneyActivities>(mobileMoneyActivityOptions);

/**
 * When to ask M-Pesa about a prompt whose callback has not come (callbacks do get lost), in
 * multiples of the first delay (30 s by default): then backing off; after the last check the
 * prompt counts as failed.
 */
const promptCheckSteps = [1, 2, 4, 6, 10];
/** While M-Pesa cannot be asked at all, a prompt is re-checked at most this many first delays apart. */
const promptRetryCapSteps = 10;

/** One open prompt: `checks` counts answers that said "still open", `errors` failed asks. */
export interface PromptCheck {
  phone: string;
  checks: number;
  errors: number;
  dueAtMs: number;
  /** Pre-patch histories only: the callback that claimed success while the query said pending. */
  callbackReport?: PaymentReport;
}

/** What the link's workflow lends the prompt book: its payments and how it settles them. */
export interface PromptOutcomes {
  linkId: string;
  /**
   * The rail the link's prompts are on (its rail whose terms say `prompted`: M-Pesa's): sent by the
   * `startMobileMoneyPayment` update, named by their CheckoutRequestID and settled by the STK
   * query, never by a recorded deposit.
   */
  promptRail: RailId;
  mobileMoneyAmount: number | null;
  paymentState(key: string): string | undefined;
  confirmed(report: PaymentReport): Promise<void>;
  /** `unanswered`: M-Pesa never said how the prompt ended (it is asked once more before the link closes). */
  failed(key: string, reason: string, unanswered?: boolean): Promise<void>;
  /** When the link stops watching: a prompt M-Pesa cannot be asked about past this fails. */
  watchEndsAtMs(): number;
}

/**
 * The M-Pesa prompts of one link and their settling: every prompt is settled from evidence (the
 * STK query with the merchant's credentials, and the stored callbacks), on a backing-off schedule
 * or at once when a hint (a callback) arrives. Deterministic like the workflow it runs in: the
 * same activity calls, in the same order, from the same state.
 */
export class PromptBook {
  /** Read and settled by the pre-patch paths too (workflows/payment-link-legacy.ts). */
  readonly checks: Map<string, PromptCheck>;
  /** The backing-off delays of `promptCheckSteps`, in milliseconds. */
  readonly delaysMs: number[];

  constructor(firstCheckMs: number, carried: [string, PromptCheck][] = []) {
    this.checks = new Map(carried);
    this.delaysMs = promptCheckSteps.map((n) => n * firstCheckMs);
  }

  get size(): number {
    return this.checks.size;
  }

  /** A prompt was just sent: first check after the first delay. */
  add(key: string, phone: string): void {
    this.checks.set(key, { phone, checks: 0, errors: 0, dueAtMs: Date.now() + this.delaysMs[0]! });
  }

  /** Any M-Pesa hint (a callback, a signal) asks for the prompt to be settled now by the STK query. */
  requestCheck(key: string, outcomes: Pick<PromptOutcomes, 'paymentState'>): void {
    if (outcomes.paymentState(key) === 'confirmed') return;
    const check = this.checks.get(key);
    if (check) check.dueAtMs = Math.min(check.dueAtMs, Date.now());
    else this.checks.set(key, { phone: '', checks: 0, errors: 0, dueAtMs: Date.now() });
  }

  nextDueMs(): number {
    return Math.min(Infinity, ...[...this.checks.values()].map((c) => c.dueAtMs));
  }

  /** What a run that continues as new carries over. */
  carry(): [string, Omit<PromptCheck, 'callbackReport'>][] {
    return [...this.checks.entries()].map(([key, c]) => [key, { phone: c.phone, checks: c.checks, errors: c.errors, dueAtMs: c.dueAtMs }]);
  }

  /** Settles every due prompt from evidence; M-Pesa being unreachable changes nothing but the next ask. */
  async settleDue(o: PromptOutcomes): Promise<void> {
    for (const [key, check] of this.checks) {
      if (o.paymentState(key) === 'confirmed') {
        this.checks.delete(key);
        continue;
      }
      if (Date.now() < check.dueAtMs) continue;
      let answer: PromptSettlement;
      try {
        answer = await mobileMoney.settleStkPrompt({ linkId: o.linkId, checkoutRequestId: key });
      } catch (err) {
        check.errors += 1;
        if (Date.now() < o.watchEndsAtMs()) {
          check.dueAtMs = Date.now() + this.delaysMs[0]! * Math.min(2 ** (check.errors - 1), promptRetryCapSteps);
          log.warn('M-Pesa could not be asked about a prompt; asking again later', { linkId: o.linkId, key, errors: check.errors, error: String(err) });
          continue;
        }
        await o.failed(key, 'M-Pesa could not be asked how this prompt ended before the link closed.', true);
        this.checks.delete(key);
        continue;
      }
      if (answer.status === 'succeeded') await o.confirmed(answer.report);
      else if (answer.status === 'failed') await o.failed(key, answer.reason);
      else if (answer.status === 'not_ours') log.warn('A hint named a prompt this link never sent; ignored', { linkId: o.linkId, key });
      else if ((check.checks += 1) >= this.delaysMs.length) await o.failed(key, 'M-Pesa never reported an outcome for this prompt.', true);
      else {
        check.dueAtMs = Date.now() + this.delaysMs[check.checks]!;
        continue;
      }
      this.checks.delete(key);
    }
  }

  /**
   * The last look before the link closes: each prompt M-Pesa never gave an outcome for is asked
   * once more (a late callback lost, a query that kept failing). Paid: counted (late if the link
   * expired meanwhile). Anything else leaves it failed; an error is logged, not retried.
   */
  async askUnansweredOnce(keys: string[], o: PromptOutcomes): Promise<void> {
    for (const key of keys) {
      if (o.paymentState(key) === 'confirmed') continue;
      try {
        const answer = await mobileMoney.settleStkPrompt({ linkId: o.linkId, checkoutRequestId: key });
        if (answer.status === 'succeeded') await o.confirmed(answer.report);
      } catch (err) {
        log.warn('M-Pesa could not be asked about a prompt before the link closed', { linkId: o.linkId, key, error: String(err) });
      }
    }
  }
}
