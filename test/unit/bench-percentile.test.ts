import { describe, expect, it } from '@jest/globals';
import { percentile } from '../../bench/chain-latency.js';

describe("the chain bench's percentiles (nearest rank)", () => {
  it('gives the value at the rank ceil(p/100 × n), rounded to the millisecond', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => (i + 1) * 100.4);
    expect(percentile(twenty, 50)).toBe(1004); // rank 10
    expect(percentile(twenty, 99)).toBe(2008); // rank 20: with 20 rounds the p99 is the worst round
    expect(percentile([5, 1, 3], 50)).toBe(3);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([2, 9], 0)).toBe(2);
  });
});
