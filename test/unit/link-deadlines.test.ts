import { describe, expect, it } from '@jest/globals';
import { expiryDeadlineMs, isExpiring, wakeAtMs, watchEndsAtMs } from '../../domain/link-deadlines.js';

const windows = { expiresAtMs: 10_000, lateWatchMs: 1_000 };

describe('expiry', () => {
  it('comes at expiresAt for a PENDING link and at the end of the late window for a PROCESSING one', () => {
    expect(expiryDeadlineMs('PENDING', windows)).toBe(10_000);
    expect(expiryDeadlineMs('PROCESSING', windows)).toBe(11_000);
    expect(isExpiring('PENDING', 9_999, windows)).toBe(false);
    expect(isExpiring('PENDING', 10_000, windows)).toBe(true);
    expect(isExpiring('PROCESSING', 10_999, windows)).toBe(false);
    expect(isExpiring('PROCESSING', 11_000, windows)).toBe(true);
  });

  it('never comes for a settled link', () => {
    for (const status of ['CONFIRMED', 'EXPIRED', 'CANCELLED'] as const) {
      expect(expiryDeadlineMs(status, windows)).toBe(Infinity);
      expect(isExpiring(status, Number.MAX_SAFE_INTEGER, windows)).toBe(false);
    }
  });
});

describe('the watch', () => {
  it('of an open link ends a late window after its expiry', () => {
    expect(watchEndsAtMs('PENDING', 0, windows)).toBe(11_000);
    expect(watchEndsAtMs('PROCESSING', 0, windows)).toBe(11_000);
  });

  it('of a settled link ends a late window after it settled', () => {
    expect(watchEndsAtMs('CONFIRMED', 5_000, windows)).toBe(6_000);
    expect(watchEndsAtMs('CANCELLED', 5_000, windows)).toBe(6_000);
    // A late payment confirmed after expiry opens its own window.
    expect(watchEndsAtMs('CONFIRMED', 10_800, windows)).toBe(11_800);
  });

  it('of an expired link ends a late window after expiry at the earliest, or after it expired', () => {
    expect(watchEndsAtMs('EXPIRED', 0, windows)).toBe(11_000);
    expect(watchEndsAtMs('EXPIRED', 11_000, windows)).toBe(12_000); // PROCESSING until the late window ended
  });

  it('wakes a PENDING link at its expiry and any other at the end of its watch', () => {
    expect(wakeAtMs('PENDING', 0, windows)).toBe(10_000);
    expect(wakeAtMs('PROCESSING', 0, windows)).toBe(11_000);
    expect(wakeAtMs('CONFIRMED', 5_000, windows)).toBe(6_000);
  });
});
