import { describe, expect, it } from '@jest/globals';
import { inlineBudget, inlineBudgetMs } from '../../services/webhooks/fan-out.js';

describe('the fan-out’s inline budget', () => {
  it('lets a first attempt go inline only while it starts within the budget of the dispatch', () => {
    const inTime = inlineBudget(1_000);
    expect(inTime(1_000)).toBe(true);
    expect(inTime(1_000 + inlineBudgetMs - 1)).toBe(true);
    expect(inTime(1_000 + inlineBudgetMs)).toBe(false);
    expect(inTime(1_000 + 60_000)).toBe(false);
  });

  it('leaves a first attempt to its delivery workflow once a 10 s attempt could outlast the 30 s dispatch', () => {
    expect(inlineBudgetMs + 10_000).toBeLessThan(30_000);
    const none = inlineBudget(0, 0);
    expect(none(0)).toBe(false);
  });
});
