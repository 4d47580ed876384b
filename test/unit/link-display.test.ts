import { describe, expect, it } from '@jest/globals';
import { linkStateLine, linkStateMemo, linkSummary } from '../../domain/link-display.js';

const expires = Date.parse('2026-11-28T12:00:00.000Z');
const day = 24 * 60 * 60_000;

describe('what the Temporal UI shows of a link', () => {
  it('summarises a link or invoice by id, amounts (exact, from micro-USDT), store and environment', () => {
    const input = { linkId: 'pl_1', storeId: 'cl_9', environment: 'live' as const, usdtAmountMicro: '10500000', mobileMoneyAmount: null };
    expect(linkSummary('payment_link', input)).toBe('Payment link pl_1 · 10.5 USDT · store cl_9 · live');
    expect(linkSummary('invoice', { ...input, linkId: 'inv_2', usdtAmountMicro: '1', mobileMoneyAmount: 1365 })).toBe('Invoice inv_2 · 0.000001 USDT / 1365 KES · store cl_9 · live');
  });

  it('says until when a settled link watches for late payments, and when an open one expires', () => {
    expect(linkStateLine('PENDING', expires, expires + day)).toBe('PENDING · expires at 2026-11-28T12:00:00.000Z');
    expect(linkStateLine('PROCESSING', expires, expires + day)).toBe('PROCESSING · a payment is being confirmed; expires at 2026-11-29T12:00:00.000Z if it never is');
    for (const s of ['CONFIRMED', 'EXPIRED', 'CANCELLED'] as const) {
      expect(linkStateLine(s, expires, expires + day)).toBe(`${s} · watching for late payments until 2026-11-29T12:00:00.000Z`);
    }
    expect(linkStateMemo('PENDING', expires, expires + day)).toEqual({
      status: 'PENDING', expiresAt: '2026-11-28T12:00:00.000Z', watchingForLatePaymentsUntil: null, state: 'PENDING · expires at 2026-11-28T12:00:00.000Z',
    });
    expect(linkStateMemo('CONFIRMED', expires, expires + 2 * day)).toMatchObject({ status: 'CONFIRMED', watchingForLatePaymentsUntil: '2026-11-30T12:00:00.000Z' });
  });
});
