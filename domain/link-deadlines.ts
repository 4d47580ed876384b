import { isTerminal, type LinkStatus } from './states.js';

/**
 * A payment link's deadlines, pure: when an open link expires and when its workflow stops
 * watching for late and double payments. Times are epoch milliseconds.
 */
export interface LinkWindows {
  expiresAtMs: number;
  /** How long after expiry (or after the link settled) payments are still recorded. */
  lateWatchMs: number;
}

/**
 * When a link in `status` expires: PENDING at `expiresAtMs`; PROCESSING (a payment on its way)
 * only when the late window after it ends; never once settled.
 */
export function expiryDeadlineMs(status: LinkStatus, w: LinkWindows): number {
  if (status === 'PENDING') return w.expiresAtMs;
  if (status === 'PROCESSING') return w.expiresAtMs + w.lateWatchMs;
  return Infinity;
}

/** Whether a link in `status` is due to expire at `nowMs`. */
export function isExpiring(status: LinkStatus, nowMs: number, w: LinkWindows): boolean {
  return nowMs >= expiryDeadlineMs(status, w);
}

/**
 * When the workflow stops watching: the late window after the link settled (`terminalAtMs`),
 * counted from expiry at the earliest for an expired link; for an open link, the late window
 * after its expiry.
 */
export function watchEndsAtMs(status: LinkStatus, terminalAtMs: number, w: LinkWindows): number {
  if (!isTerminal(status)) return w.expiresAtMs + w.lateWatchMs;
  return Math.max(terminalAtMs, status === 'EXPIRED' ? w.expiresAtMs : 0) + w.lateWatchMs;
}

/** When the workflow must next wake on its own: a PENDING link at its expiry, any other at the end of its watch. */
export function wakeAtMs(status: LinkStatus, terminalAtMs: number, w: LinkWindows): number {
  return status === 'PENDING' ? w.expiresAtMs : watchEndsAtMs(status, terminalAtMs, w);
}
