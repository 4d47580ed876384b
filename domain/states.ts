/**
 * The payment-link state machine as a pure transition table. Workflows consult it before any
 * transition; an illegal one is a named error that says the current and the expected states.
 */
export const linkStatuses = ['PENDING', 'PROCESSING', 'CONFIRMED', 'EXPIRED', 'CANCELLED'] as const;
export type LinkStatus = (typeof linkStatuses)[number];

export type LinkEvent = 'prompt_sent' | 'payment_seen' | 'payment_confirmed' | 'payment_failed' | 'payment_dropped' | 'expired' | 'cancelled' | 'late_payment_confirmed';

const transitions: Record<LinkEvent, Partial<Record<LinkStatus, LinkStatus>>> = {
  prompt_sent: { PENDING: 'PROCESSING' },
  payment_seen: { PENDING: 'PROCESSING', PROCESSING: 'PROCESSING' },
  payment_confirmed: { PENDING: 'CONFIRMED', PROCESSING: 'CONFIRMED' },
  payment_failed: { PROCESSING: 'PENDING' },
  payment_dropped: { PROCESSING: 'PENDING' },
  expired: { PENDING: 'EXPIRED', PROCESSING: 'EXPIRED' },
  cancelled: { PENDING: 'CANCELLED' },
  // A full payment confirmed within the late window after expiry still settles the link.
  late_payment_confirmed: { EXPIRED: 'CONFIRMED' },
};

export class IllegalTransitionError extends Error {
  constructor(readonly from: LinkStatus, readonly event: LinkEvent, readonly allowedFrom: LinkStatus[]) {
    super(`Cannot apply ${event} to a ${from} payment link; it needs ${allowedFrom.join(' or ')}.`);
    this.name = 'IllegalTransitionError';
  }
}

export function nextStatus(from: LinkStatus, event: LinkEvent): LinkStatus {
  const to = transitions[event][from];
  if (!to) throw new IllegalTransitionError(from, event, Object.keys(transitions[event]) as LinkStatus[]);
  return to;
}

export function isTerminal(status: LinkStatus): boolean {
  return status === 'CONFIRMED' || status === 'EXPIRED' || status === 'CANCELLED';
}
