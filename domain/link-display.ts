import { formatUsdt } from './money.js';
import { isTerminal, type LinkStatus } from './states.js';

/**
 * What the Temporal UI shows ops about a link's (or invoice's) workflow without a query (issue
 * 34): a summary set once at start, and a memo and the workflow's current details that follow the
 * status. A settled link's workflow stays "Running" while it watches for late payments; these say
 * so and until when. Pure and deterministic (the workflow calls it): no phone number, no address,
 * no secret ever goes in, only ids, amounts, the status and times.
 */

/** The memo keys the workflow keeps current (the correlation id has its own, domain/correlation.ts). */
export const linkMemoKeys = { status: 'status', expiresAt: 'expiresAt', watchingUntil: 'watchingForLatePaymentsUntil', state: 'state' } as const;

export interface LinkSummaryInput {
  linkId: string;
  storeId: string;
  environment: 'test' | 'live';
  usdtAmountMicro: string;
  mobileMoneyAmount: number | null;
}

/** The workflow's static summary: "Payment link pl_… · 10.5 USDT · store … · test". */
export function linkSummary(kind: 'payment_link' | 'invoice', input: LinkSummaryInput): string {
  const amounts = [`${formatUsdt(BigInt(input.usdtAmountMicro))} USDT`, ...(input.mobileMoneyAmount !== null ? [`${input.mobileMoneyAmount} KES`] : [])];
  return `${kind === 'invoice' ? 'Invoice' : 'Payment link'} ${input.linkId} · ${amounts.join(' / ')} · store ${input.storeId} · ${input.environment}`;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * One line on the link's state: "CONFIRMED · watching for late payments until <ISO time>" once
 * settled; "PENDING · expires at <ISO time>" while open; "PROCESSING · a payment is being
 * confirmed; expires at <ISO time> if it never is" while a payment is on its way.
 */
export function linkStateLine(status: LinkStatus, expiresAtMs: number, watchEndsAtMs: number): string {
  if (isTerminal(status)) return `${status} · watching for late payments until ${iso(watchEndsAtMs)}`;
  if (status === 'PROCESSING') return `PROCESSING · a payment is being confirmed; expires at ${iso(watchEndsAtMs)} if it never is`;
  return `${status} · expires at ${iso(expiresAtMs)}`;
}

/** The memo for a status: the status, the expiry, and once settled the end of the late-payment watch. */
export function linkStateMemo(status: LinkStatus, expiresAtMs: number, watchEndsAtMs: number): Record<string, string | null> {
  return {
    [linkMemoKeys.status]: status,
    [linkMemoKeys.expiresAt]: iso(expiresAtMs),
    [linkMemoKeys.watchingUntil]: isTerminal(status) ? iso(watchEndsAtMs) : null,
    [linkMemoKeys.state]: linkStateLine(status, expiresAtMs, watchEndsAtMs),
  };
}
