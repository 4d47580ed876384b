import { describe, expect, it } from '@jest/globals';
import { judge, openingAdjustment, rescanDue } from '../../domain/reconciliation.js';

describe('the reconciler arithmetic (domain/reconciliation.ts)', () => {
  it('matches a balance that the recorded deposits and the adjustment explain exactly', () => {
    expect(judge(10n, 10n, 0n)).toEqual({ kind: 'match' });
    expect(judge(15n, 10n, 5n)).toEqual({ kind: 'match' }); // an opening balance of 5
    expect(judge(0n, 10n, -10n)).toEqual({ kind: 'match' }); // swept once, noted then
  });

  it('calls more on chain a mismatch of the unexplained amount, and less an outflow of what left', () => {
    expect(judge(12n, 10n, 0n)).toEqual({ kind: 'mismatch', unexplained: 2n });
    expect(judge(3n, 10n, 0n)).toEqual({ kind: 'outflow', amount: 7n });
    expect(judge(10n ** 30n + 1n, 10n ** 30n, 0n)).toEqual({ kind: 'mismatch', unexplained: 1n }); // 18-decimal amounts stay exact
  });

  it("takes a derived address's unexplained balance at first read as its opening balance, never a link's", () => {
    expect(openingAdjustment('derived', 50n, 20n)).toBe(30n);
    expect(openingAdjustment('derived', 10n, 20n)).toBe(0n); // swept before: an outflow next, not a negative opening
    expect(openingAdjustment('payment_link', 50n, 20n)).toBe(0n);
    expect(openingAdjustment('invoice', 50n, 0n)).toBe(0n);
  });

  it('rescans an open mismatch again only when its balance or providers changed, or after a while', () => {
    const open = { balance: 5n, fingerprint: 'a', rescannedAtMs: 1_000 };
    expect(rescanDue(null, { balance: 5n, fingerprint: 'a', atMs: 1_000 }, 60_000)).toBe(true);
    expect(rescanDue(open, { balance: 5n, fingerprint: 'a', atMs: 2_000 }, 60_000)).toBe(false);
    expect(rescanDue(open, { balance: 6n, fingerprint: 'a', atMs: 2_000 }, 60_000)).toBe(true);
    expect(rescanDue(open, { balance: 5n, fingerprint: 'b', atMs: 2_000 }, 60_000)).toBe(true);
    expect(rescanDue(open, { balance: 5n, fingerprint: 'a', atMs: 61_000 }, 60_000)).toBe(true);
  });
});
