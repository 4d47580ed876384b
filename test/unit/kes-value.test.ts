import { describe, expect, it } from '@jest/globals';
import { kesAtCount, multiplyDecimal, roundKesHalfEven } from '../../domain/kes-value.js';

describe('a payment’s KES value when counted', () => {
  it('is the amount itself for a KES payment (M-Pesa): rate 1, source KES, whatever the rates service says', () => {
    expect(kesAtCount({ currency: 'KES', amountMinor: '1500', decimals: 0 }, { unavailable: 'sources down' }))
      .toEqual({ kesValue: '1500', rate: '1', source: 'KES', missingReason: null });
  });

  it('is amount × rate, exact, for USDT at 6 and 18 decimals, with the sources that agreed', () => {
    expect(kesAtCount({ currency: 'USDT', amountMinor: '10500000', decimals: 6 }, { kesPerUsdt: '129.35', source: 'coingecko+coinbase' }))
      .toEqual({ kesValue: '1358.175', rate: '129.35', source: 'coingecko+coinbase', missingReason: null });
    expect(multiplyDecimal('1000000000000000001', 18, '130')).toBe('130.00000000000000013');
    expect(multiplyDecimal('1', 6, '0.000001')).toBe('0.000000000001');
  });

  it('is null with the reason when no rate was available', () => {
    expect(kesAtCount({ currency: 'USDT', amountMinor: '1', decimals: 6 }, { unavailable: 'no KES rate at count time: sources disagree' }))
      .toEqual({ kesValue: null, rate: null, source: null, missingReason: 'no KES rate at count time: sources disagree' });
  });
});

describe('rounding to the shilling, half to even', () => {
  it.each([
    ['0', '0'], ['12', '12'], ['12.4', '12'], ['12.5', '12'], ['13.5', '14'], ['12.51', '13'], ['12.500000000000000001', '13'],
    ['12.49999', '12'], ['0.5', '0'], ['1.5', '2'], ['-0.5', '0'], ['-1.5', '-2'], ['1358.175', '1358'],
  ])('%s → %s', (value, rounded) => {
    expect(roundKesHalfEven(value)).toBe(rounded);
  });
});
