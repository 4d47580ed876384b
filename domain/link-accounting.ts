import { coversDue, fromMicro, toMicro } from './money.js';
import type { LinkEvent, LinkStatus } from './states.js';

/**
 * A payment link's accounting, pure: what is due, what was received, and what a confirmed
 * payment does to the link (under, exact, over, late, after the link was settled). The link's
 * workflow applies the verdicts; nothing here reads a clock or does I/O.
 *
 * A link is due in two currencies, each counted on its own: USDT on every chain rail, as
 * micro-USDT (`bigint`, 6 decimals, whatever the token's decimals), and KES on M-Pesa, as whole
 * shillings (`bigint`). Money is never a float.
 */
export type LinkCurrency = 'USDT' | 'KES';

/** How a payment counted (the `disposition` of a recorded payment; db/link-payment-repo.ts has the same union). */
export type PaymentDisposition = 'payment' | 'late' | 'duplicate' | 'after_cancel' | 'underpaid' | 'overpaid';

/** What a link asks for. */
export interface LinkTerms {
  dueUsdtMicro: bigint;
  /** Whole KES for an M-Pesa payment (0 when the link offers no M-Pesa). */
  dueKes: bigint;
  /** Basis points of the USDT amount a payment may fall short and still confirm (M-Pesa: none). */
  underpaymentToleranceBps: number;
}

/** The terms of a workflow's input: the USDT amount as a decimal integer string, KES as a whole number or null. */
export function linkTerms(input: { usdtAmountMicro: string; mobileMoneyAmount: number | null; underpaymentToleranceBps: number }): LinkTerms {
  return {
    dueUsdtMicro: BigInt(input.usdtAmountMicro),
    dueKes: BigInt(input.mobileMoneyAmount ?? 0),
    underpaymentToleranceBps: input.underpaymentToleranceBps,
  };
}

/** One payment as the accounting sees it: its currency, its state and its amount in the link's units. */
export interface CountedPayment {
  currency: LinkCurrency;
  /** `initiated` (a prompt sent), `seen`, `confirmed`, `failed` or `dropped`. */
  state: string;
  amount: bigint;
}

/**
 * A reported amount (the rail's smallest unit, as a decimal integer string) in the link's units:
 * micro-USDT rounded down (18-decimal dust never credits a micro-USDT), or whole KES as reported.
 */
export function amountInLinkUnits(currency: LinkCurrency, amountMinor: string, decimals: number): bigint {
  return currency === 'KES' ? BigInt(amountMinor) : toMicro(BigInt(amountMinor), decimals);
}

/** The amount due in a currency, in the link's units. */
export function amountDue(terms: LinkTerms, currency: LinkCurrency): bigint {
  return currency === 'KES' ? terms.dueKes : terms.dueUsdtMicro;
}

/** The amount due in a rail's smallest unit (what a simulated payment pays): KES as is, USDT in the token's decimals. */
export function amountDueMinor(terms: LinkTerms, currency: LinkCurrency, decimals: number): bigint {
  return currency === 'KES' ? terms.dueKes : fromMicro(terms.dueUsdtMicro, decimals);
}

/** The confirmed total in one currency. */
export function received(payments: Iterable<CountedPayment>, currency: LinkCurrency): bigint {
  let sum = 0n;
  for (const p of payments) if (p.state === 'confirmed' && p.currency === currency) sum += p.amount;
  return sum;
}

/** Whether a payment is still on its way (a prompt on a phone, a deposit not yet at depth). */
export function hasPaymentInFlight(payments: Iterable<CountedPayment>): boolean {
  for (const p of payments) if (p.state === 'seen' || p.state === 'initiated') return true;
  return false;
}

/**
 * What one newly confirmed payment does to a link:
 * - `settled`: the link was CONFIRMED (a `duplicate`) or CANCELLED (`after_cancel`): recorded, nothing moves;
 * - `underpaid`: the total confirmed in its currency is short of the amount due (beyond the
 *   tolerance): recorded, the link stays open (or expired);
 * - `confirms`: the total covers the amount due: `payment`, `overpaid` when over, `late` when the
 *   link had expired (the late window), with the state-table event to apply.
 * `receivedUsdtMicro` is the link's USDT total, which the read model shows (KES is listed per payment).
 */
export type ConfirmedVerdict =
  | { kind: 'settled'; disposition: 'duplicate' | 'after_cancel' }
  | { kind: 'underpaid'; disposition: 'underpaid'; receivedUsdtMicro: bigint }
  | { kind: 'confirms'; disposition: 'payment' | 'overpaid' | 'late'; event: Extract<LinkEvent, 'payment_confirmed' | 'late_payment_confirmed'>; receivedUsdtMicro: bigint };

/**
 * The verdict on a payment just confirmed in `currency`, given the link's status before it and
 * every payment of the link with this one already counted as confirmed.
 */
export function judgeConfirmed(status: LinkStatus, currency: LinkCurrency, payments: readonly CountedPayment[], terms: LinkTerms): ConfirmedVerdict {
  if (status === 'CONFIRMED') return { kind: 'settled', disposition: 'duplicate' };
  if (status === 'CANCELLED') return { kind: 'settled', disposition: 'after_cancel' };
  const total = received(payments, currency);
  const due = amountDue(terms, currency);
  const receivedUsdtMicro = received(payments, 'USDT');
  const toleranceBps = currency === 'KES' ? 0 : terms.underpaymentToleranceBps;
  if (!coversDue(total, due, toleranceBps)) return { kind: 'underpaid', disposition: 'underpaid', receivedUsdtMicro };
  if (status === 'EXPIRED') return { kind: 'confirms', disposition: 'late', event: 'late_payment_confirmed', receivedUsdtMicro };
  return { kind: 'confirms', disposition: total > due ? 'overpaid' : 'payment', event: 'payment_confirmed', receivedUsdtMicro };
}

/**
 * When a payment fails or is dropped: a PROCESSING link with nothing else in flight goes back to
 * PENDING, or to EXPIRED if its time ran out meanwhile; otherwise nothing moves (null).
 */
export function eventAfterFailure(status: LinkStatus, inFlight: boolean, nowMs: number, expiresAtMs: number): LinkEvent | null {
  if (status !== 'PROCESSING' || inFlight) return null;
  return nowMs >= expiresAtMs ? 'expired' : 'payment_failed';
}
