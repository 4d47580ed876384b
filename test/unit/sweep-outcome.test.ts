import { describe, expect, it } from '@jest/globals';
import { sweepEnded, sweepOutcome, type SweepTxState } from '../../domain/sweep-outcome.js';

/** A sweep's state from its transactions once its broadcast request ended (docs/treasury.md, "Followed to the end"). */
const plan = ['top_up', 'top_up', 'transfer', 'transfer'] as const;
const sent = (...states: SweepTxState[]) => states.map((state, seq) => ({ seq, state }));

describe('sweepOutcome', () => {
  it('is final only when every planned transfer is final and nothing sent is pending', () => {
    expect(sweepOutcome(plan, sent('final', 'final', 'final', 'final'))).toBe('final');
    expect(sweepOutcome(plan, sent('mined', 'final', 'final', 'final'))).toBe('mined');
    expect(sweepOutcome(plan, sent('final', 'final', 'final', 'mined'))).toBe('mined');
  });

  it('is broadcast while a transaction sent is in no block (pending, or taken out by a reorganisation)', () => {
    expect(sweepOutcome(plan, sent('final', 'final', 'mined', 'broadcast'))).toBe('broadcast');
    expect(sweepOutcome(plan, sent('final', 'final', 'final', 'broadcast'))).toBe('broadcast');
  });

  it('waits on a transfer still pending even when another will never go through', () => {
    expect(sweepOutcome(plan, sent('final', 'final', 'mined', 'dropped'))).toBe('mined');
    expect(sweepOutcome(plan, sent('final', 'final', 'broadcast'))).toBe('broadcast');
  });

  it('is partially_completed when some transfers went through and the others never will (unsent, reverted, dropped)', () => {
    expect(sweepOutcome(plan, sent('final', 'final', 'final'))).toBe('partially_completed');
    expect(sweepOutcome(plan, sent('final', 'final', 'final', 'failed'))).toBe('partially_completed');
    expect(sweepOutcome(plan, sent('final', 'final', 'dropped', 'final'))).toBe('partially_completed');
  });

  it('is failed when no transfer went through, whatever the top-ups are doing', () => {
    expect(sweepOutcome(plan, sent('mined'))).toBe('failed');
    expect(sweepOutcome(plan, sent('failed'))).toBe('failed');
    expect(sweepOutcome(plan, sent('final', 'final', 'failed', 'dropped'))).toBe('failed');
    expect(sweepOutcome(plan, [])).toBe('failed');
  });

  it('ends in final, partially_completed and failed only', () => {
    expect(['broadcast', 'mined', 'final', 'partially_completed', 'failed'].filter((s) => sweepEnded(s as never))).toEqual(['final', 'partially_completed', 'failed']);
  });
});
