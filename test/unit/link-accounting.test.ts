import { describe, expect, it } from '@jest/globals';
import type { Disposition } from '../../db/link-payment-repo.js';
import {
  amountDue,
  amountDueMinor,
  amountInLinkUnits,
  eventAfterFailure,
  hasPaymentInFlight,
  judgeConfirmed,
  linkTerms,
  received,
  type CountedPayment,
  type LinkCurrency,
  type PaymentDisposition,
} from '../../domain/link-accounting.js';
import { maxUsdtMicro, parseUsdt } from '../../domain/money.js';

// The dispositions the accounting gives are exactly those the read model stores (a compile-time check).
const sameDispositions: [Disposition] extends [PaymentDisposition] ? ([PaymentDisposition] extends [Disposition] ? true : false) : false = true;

/** A link due 10 USDT (or 1,300 KES on M-Pesa), no tolerance unless given. */
const terms = (usdt = '10', kes: number | null = 1300, underpaymentToleranceBps = 0) =>
  linkTerms({ usdtAmountMicro: String(parseUsdt(usdt)), mobileMoneyAmount: kes, underpaymentToleranceBps });
const confirmed = (currency: LinkCurrency, amount: bigint): CountedPayment => ({ currency, state: 'confirmed', amount });
const usdt = (value: string) => confirmed('USDT', parseUsdt(value));

describe('amounts in the link units', () => {
  it('reads a 6-decimal USDT amount as micro-USDT and an 18-decimal one rounded down to the micro', () => {
    expect(amountInLinkUnits('USDT', '10500000', 6)).toBe(10_500_000n);
    expect(amountInLinkUnits('USDT', '10500000000000000000', 18)).toBe(10_500_000n);
    // One wei short of a micro-USDT never credits that micro-USDT.
    expect(amountInLinkUnits('USDT', '10499999999999999999', 18)).toBe(10_499_999n);
    expect(amountInLinkUnits('USDT', '999999999999', 18)).toBe(0n);
  });

  it('reads KES as whole shillings, whatever decimals the report gives', () => {
    expect(amountInLinkUnits('KES', '1300', 0)).toBe(1300n);
    expect(amountInLinkUnits('KES', '1300', 6)).toBe(1300n);
  });

  it('keeps zero and the largest amounts exact (bigint, never a float)', () => {
    expect(amountInLinkUnits('USDT', '0', 18)).toBe(0n);
    expect(amountInLinkUnits('USDT', (maxUsdtMicro * 10n ** 12n).toString(), 18)).toBe(maxUsdtMicro);
    expect(amountInLinkUnits('USDT', '123456789012345678901234567890', 18)).toBe(123456789012345678n);
    expect(amountInLinkUnits('KES', '9007199254740993', 0)).toBe(9_007_199_254_740_993n); // past 2^53
  });

  it('says what is due in each currency and in a rail smallest unit', () => {
    const t = terms('10.5', 1365);
    expect(t).toEqual({ dueUsdtMicro: 10_500_000n, dueKes: 1365n, underpaymentToleranceBps: 0 });
    expect(amountDue(t, 'USDT')).toBe(10_500_000n);
    expect(amountDue(t, 'KES')).toBe(1365n);
    expect(amountDueMinor(t, 'USDT', 18)).toBe(10_500_000_000_000_000_000n);
    expect(amountDueMinor(t, 'USDT', 6)).toBe(10_500_000n);
    expect(amountDueMinor(t, 'KES', 0)).toBe(1365n);
  });

  it('reads the largest link amount exactly, and a link without M-Pesa as 0 KES due', () => {
    const t = terms('1000000000', null);
    expect(t.dueUsdtMicro).toBe(maxUsdtMicro);
    expect(t.dueKes).toBe(0n);
    expect(amountDueMinor(t, 'USDT', 18)).toBe(10n ** 27n);
  });
});

describe('what was received', () => {
  it('adds up only confirmed payments, each currency on its own', () => {
    const payments: CountedPayment[] = [
      usdt('4'),
      usdt('3.5'),
      { currency: 'USDT', state: 'seen', amount: 0n },
      { currency: 'USDT', state: 'dropped', amount: parseUsdt('100') },
      confirmed('KES', 500n),
      { currency: 'KES', state: 'failed', amount: 1300n },
    ];
    expect(received(payments, 'USDT')).toBe(7_500_000n);
    expect(received(payments, 'KES')).toBe(500n);
    expect(received([], 'USDT')).toBe(0n);
  });

  it('has a payment in flight while a deposit is seen or a prompt initiated, not once it failed, dropped or confirmed', () => {
    expect(hasPaymentInFlight([{ currency: 'USDT', state: 'seen', amount: 0n }])).toBe(true);
    expect(hasPaymentInFlight([{ currency: 'KES', state: 'initiated', amount: 0n }])).toBe(true);
    expect(hasPaymentInFlight([usdt('1'), { currency: 'KES', state: 'failed', amount: 0n }, { currency: 'USDT', state: 'dropped', amount: 0n }])).toBe(false);
    expect(hasPaymentInFlight([])).toBe(false);
  });
});

describe('a confirmed payment', () => {
  it('of exactly the amount due confirms the link, from PENDING or PROCESSING', () => {
    for (const status of ['PENDING', 'PROCESSING'] as const) {
      expect(judgeConfirmed(status, 'USDT', [usdt('10')], terms())).toEqual({
        kind: 'confirms',
        disposition: 'payment',
        event: 'payment_confirmed',
        receivedUsdtMicro: 10_000_000n,
      });
    }
  });

  it('one micro-USDT short leaves the link open as underpaid, with what was received so far', () => {
    expect(judgeConfirmed('PROCESSING', 'USDT', [confirmed('USDT', 9_999_999n)], terms())).toEqual({
      kind: 'underpaid',
      disposition: 'underpaid',
      receivedUsdtMicro: 9_999_999n,
    });
  });

  it('one wei short at 18 decimals is short (rounded down to the micro)', () => {
    const amount = amountInLinkUnits('USDT', (10n * 10n ** 18n - 1n).toString(), 18);
    expect(judgeConfirmed('PENDING', 'USDT', [confirmed('USDT', amount)], terms()).kind).toBe('underpaid');
  });

  it('short within the tolerance confirms as a payment; beyond it stays underpaid', () => {
    const oneHundredBps = terms('10', null, 100);
    expect(judgeConfirmed('PENDING', 'USDT', [usdt('9.9')], oneHundredBps)).toMatchObject({ kind: 'confirms', disposition: 'payment', receivedUsdtMicro: 9_900_000n });
    expect(judgeConfirmed('PENDING', 'USDT', [usdt('9.899999')], oneHundredBps)).toMatchObject({ kind: 'underpaid' });
  });

  it('over the amount due confirms as overpaid, by a single micro-USDT too', () => {
    expect(judgeConfirmed('PENDING', 'USDT', [confirmed('USDT', 10_000_001n)], terms())).toMatchObject({ kind: 'confirms', disposition: 'overpaid', receivedUsdtMicro: 10_000_001n });
    expect(judgeConfirmed('PENDING', 'USDT', [usdt('25')], terms())).toMatchObject({ disposition: 'overpaid' });
  });

  it('completing earlier partial payments confirms the link (on any mix of chains)', () => {
    // 4 USDT on TRON (6 decimals) + 6 USDT on BSC (18 decimals) = 10.
    const bsc = confirmed('USDT', amountInLinkUnits('USDT', (6n * 10n ** 18n).toString(), 18));
    expect(judgeConfirmed('PROCESSING', 'USDT', [usdt('4')], terms())).toMatchObject({ kind: 'underpaid', receivedUsdtMicro: 4_000_000n });
    expect(judgeConfirmed('PROCESSING', 'USDT', [usdt('4'), bsc], terms())).toMatchObject({ kind: 'confirms', disposition: 'payment', receivedUsdtMicro: 10_000_000n });
    expect(judgeConfirmed('PROCESSING', 'USDT', [usdt('4'), usdt('3'), usdt('3.000001')], terms())).toMatchObject({ disposition: 'overpaid', receivedUsdtMicro: 10_000_001n });
  });

  it('after the link expired confirms it as late when it covers the amount, and stays underpaid when it does not', () => {
    expect(judgeConfirmed('EXPIRED', 'USDT', [usdt('10')], terms())).toEqual({
      kind: 'confirms',
      disposition: 'late',
      event: 'late_payment_confirmed',
      receivedUsdtMicro: 10_000_000n,
    });
    // Late and over: still `late` (the late window's rule comes first).
    expect(judgeConfirmed('EXPIRED', 'USDT', [usdt('12')], terms())).toMatchObject({ disposition: 'late' });
    expect(judgeConfirmed('EXPIRED', 'USDT', [usdt('9')], terms())).toMatchObject({ kind: 'underpaid' });
  });

  it('after the link was cancelled is recorded as after_cancel, whatever its amount', () => {
    for (const payments of [[usdt('10')], [usdt('1')], [confirmed('KES', 1300n)]]) {
      expect(judgeConfirmed('CANCELLED', payments[0]!.currency, payments, terms())).toEqual({ kind: 'settled', disposition: 'after_cancel' });
    }
  });

  it('after the link was confirmed is a duplicate', () => {
    expect(judgeConfirmed('CONFIRMED', 'USDT', [usdt('10'), usdt('10')], terms())).toEqual({ kind: 'settled', disposition: 'duplicate' });
    expect(judgeConfirmed('CONFIRMED', 'KES', [confirmed('KES', 1300n)], terms())).toEqual({ kind: 'settled', disposition: 'duplicate' });
  });

  it('in KES counts against the KES amount, with no tolerance, and reports the USDT total for the read model', () => {
    const withTolerance = terms('10', 1300, 500);
    expect(judgeConfirmed('PROCESSING', 'KES', [confirmed('KES', 1300n)], withTolerance)).toEqual({
      kind: 'confirms',
      disposition: 'payment',
      event: 'payment_confirmed',
      receivedUsdtMicro: 0n,
    });
    expect(judgeConfirmed('PROCESSING', 'KES', [confirmed('KES', 1299n)], withTolerance)).toEqual({ kind: 'underpaid', disposition: 'underpaid', receivedUsdtMicro: 0n });
    expect(judgeConfirmed('PROCESSING', 'KES', [confirmed('KES', 1301n)], withTolerance)).toMatchObject({ disposition: 'overpaid' });
    // USDT already received is what the read model shows; it does not pay the KES amount.
    expect(judgeConfirmed('PROCESSING', 'KES', [usdt('9'), confirmed('KES', 100n)], withTolerance)).toEqual({ kind: 'underpaid', disposition: 'underpaid', receivedUsdtMicro: 9_000_000n });
  });

  it('in USDT is not paid by shillings', () => {
    expect(judgeConfirmed('PROCESSING', 'USDT', [confirmed('KES', 1_000_000n), usdt('5')], terms())).toMatchObject({ kind: 'underpaid', receivedUsdtMicro: 5_000_000n });
  });

  it('against nothing due (a KES payment on a link without an M-Pesa amount) confirms, even at zero', () => {
    expect(judgeConfirmed('PROCESSING', 'KES', [confirmed('KES', 0n)], terms('10', null))).toMatchObject({ kind: 'confirms', disposition: 'payment' });
    expect(judgeConfirmed('PROCESSING', 'KES', [confirmed('KES', 1n)], terms('10', null))).toMatchObject({ kind: 'confirms', disposition: 'overpaid' });
  });

  it('of the largest amount is exact', () => {
    const largest = terms('1000000000', null);
    const paid = amountInLinkUnits('USDT', (10n ** 27n).toString(), 18);
    expect(judgeConfirmed('PENDING', 'USDT', [confirmed('USDT', paid)], largest)).toMatchObject({ disposition: 'payment', receivedUsdtMicro: maxUsdtMicro });
    expect(judgeConfirmed('PENDING', 'USDT', [confirmed('USDT', paid - 1n)], largest)).toMatchObject({ kind: 'underpaid' });
  });
});

describe('a failed or dropped payment', () => {
  const expiresAtMs = 1_000_000;
  it('sends a PROCESSING link with nothing else in flight back to PENDING before expiry, to EXPIRED after', () => {
    expect(eventAfterFailure('PROCESSING', false, expiresAtMs - 1, expiresAtMs)).toBe('payment_failed');
    expect(eventAfterFailure('PROCESSING', false, expiresAtMs, expiresAtMs)).toBe('expired');
  });

  it('moves nothing while another payment is in flight, or when the link is not PROCESSING', () => {
    expect(eventAfterFailure('PROCESSING', true, 0, expiresAtMs)).toBeNull();
    for (const status of ['PENDING', 'CONFIRMED', 'EXPIRED', 'CANCELLED'] as const) expect(eventAfterFailure(status, false, 0, expiresAtMs)).toBeNull();
  });
});

it('gives the dispositions the read model stores', () => {
  expect(sameDispositions).toBe(true);
});
