import { describe, expect, it } from '@jest/globals';
import { amountsReceived } from '../../domain/amounts-received.js';

const p = (currency: string, state: string, amountMinor: string | null, decimals: number | null) => ({ currency, state, amountMinor, decimals });

describe('amountsReceived', () => {
  it('is USDT "0" alone when nothing was confirmed (prompts, seen, failed and dropped payments count nothing)', () => {
    expect(amountsReceived([])).toEqual({ USDT: '0' });
    expect(amountsReceived([p('KES', 'initiated', '1500', 0), p('USDT', 'seen', '5000000', 6), p('KES', 'failed', '1500', 0), p('USDT', 'dropped', '1', 6), p('KES', 'confirmed', null, null)]))
      .toEqual({ USDT: '0' });
  });

  it('reports a link paid by M-Pesa in KES, with USDT still present', () => {
    expect(amountsReceived([p('KES', 'confirmed', '1500', 0)])).toEqual({ USDT: '0', KES: '1500' });
  });

  it('sums each currency on its own, exactly, across token decimals (BSC 18, TRON 6)', () => {
    const got = amountsReceived([
      p('USDT', 'confirmed', '1000000000000000001', 18),
      p('USDT', 'confirmed', '2500000', 6),
      p('KES', 'confirmed', '700', 0),
      p('KES', 'confirmed', '800', 0),
    ]);
    expect(got).toEqual({ USDT: '3.500000000000000001', KES: '1500' });
  });

  it('counts every confirmed disposition: money that arrived late, over, twice or after a cancel was received', () => {
    expect(amountsReceived([p('USDT', 'confirmed', '10000000', 6), p('USDT', 'confirmed', '4000000', 6)])).toEqual({ USDT: '14' });
  });
});

describe("the demo's webhook receiver line", () => {
  it('prints what the confirming rail received in its own currency', async () => {
    const { receivedOnConfirmedRail } = await import('../../demo/webhooks.js');
    const mpesa = { confirmedRail: 'MOBILE_MONEY', amountReceived: '0', amountsReceived: { USDT: '0', KES: '1500' }, payments: [{ rail: 'MOBILE_MONEY', state: 'confirmed', currency: 'KES' }] };
    expect(receivedOnConfirmedRail(mpesa)).toBe('1500 KES');
    const bsc = { confirmedRail: 'USDT_BSC', amountReceived: '10', amountsReceived: { USDT: '10' }, payments: [{ rail: 'USDT_BSC', state: 'confirmed', currency: 'USDT' }] };
    expect(receivedOnConfirmedRail(bsc)).toBe('10 USDT');
  });
});
