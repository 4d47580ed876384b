import { describe, expect, it } from '@jest/globals';
import { coversDue, formatUsdt, formatUsdtFixed, fromMicro, kesToUsdtMicro, parseUsdt, toMicro, usdtToKes } from '../../domain/money.js';

describe('USDT amounts', () => {
  it('normalises decimal strings', () => {
    expect(formatUsdt(parseUsdt('10'))).toBe('10');
    expect(formatUsdt(parseUsdt('10.50'))).toBe('10.5');
    expect(formatUsdt(parseUsdt('0010.000001'))).toBe('10.000001');
    expect(formatUsdt(parseUsdt('1000000000'))).toBe('1000000000');
    expect(formatUsdtFixed(parseUsdt('10.5'))).toBe('10.500000');
  });

  it.each(['0', '0.0000001', '1e3', '-1', '+1', '1.', '.5', '1,5', '', ' 1', '1000000000.000001', 'NaN'])('refuses %j', (v) => {
    expect(() => parseUsdt(v)).toThrow();
  });

  it('scales between 6 and 18 decimals without floats', () => {
    expect(fromMicro(10_500_000n, 18)).toBe(10_500_000_000_000_000_000n);
    expect(toMicro(10_500_000_000_000_000_999n, 18)).toBe(10_500_000n);
    expect(toMicro(123n, 6)).toBe(123n);
  });
});

describe('KES conversion', () => {
  it('rounds up to whole shillings', () => {
    expect(usdtToKes(parseUsdt('10'), '130')).toBe(1300);
    expect(usdtToKes(parseUsdt('10.01'), '130')).toBe(1302); // 1301.3 → 1302
    expect(usdtToKes(parseUsdt('0.000001'), '129.5')).toBe(1);
    expect(kesToUsdtMicro(1300, '130')).toBe(10_000_000n);
    expect(kesToUsdtMicro(100, '130')).toBe(769_231n); // 0.769230769… rounded up
  });

  it('applies an underpayment tolerance in basis points', () => {
    expect(coversDue(99n, 100n, 0)).toBe(false);
    expect(coversDue(100n, 100n, 0)).toBe(true);
    expect(coversDue(99n, 100n, 100)).toBe(true);
    expect(coversDue(98n, 100n, 100)).toBe(false);
  });
});
