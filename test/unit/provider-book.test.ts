import { describe, expect, it } from '@jest/globals';
import { describeFailure, providerLabel, ProviderBook, sideline } from '../../rails/chain/providers.js';

/** The provider book: who is asked first, how long a misbehaving provider is asked last, and what the logs may name. */
describe('ProviderBook', () => {
  const urls = ['https://user:pass@rpc.one.example/v2/SECRETKEY?x=1', 'https://rpc.two.example/KEY2'];
  const collect = () => {
    const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
    return { lines, logger: { warn: (obj: object, msg: string) => lines.push({ obj: obj as never, msg }), info: () => undefined } as never };
  };

  it('names a provider by position and host only, never by path, query or credentials', () => {
    expect(providerLabel(urls[0]!, 0)).toBe('#1 rpc.one.example');
    expect(providerLabel('not a url', 4)).toBe('#5 invalid-url');
    expect(describeFailure(new Error('HTTP request failed. URL: https://rpc.two.example/KEY2 Status: 500'))).toBe('HTTP request failed. URL: <rpc> Status: 500');
  });

  it('asks a reported provider last, for 60 s doubling with each report in a row, at most 15 minutes', () => {
    const { lines, logger } = collect();
    const book = new ProviderBook('USDT_ETH', 'live', urls, logger);
    const t0 = 1_000_000;
    expect(book.order(t0)).toEqual([0, 1]);
    book.report(0, 'erroring', 'HTTP 500', t0);
    expect(book.order(t0)).toEqual([1, 0]);
    expect(book.health()[0]).toMatchObject({ state: 'erroring', strikes: 1, sidelinedUntil: new Date(t0 + 60_000).toISOString() });
    expect(book.order(t0 + 60_001)).toEqual([0, 1]);
    const waits: number[] = [];
    let t = t0 + 60_001;
    let lastAt = t;
    for (let i = 0; i < 6; i++) {
      lastAt = t;
      book.report(0, 'lagging', 'behind', t);
      const until = Date.parse(book.health()[0]!.sidelinedUntil!);
      waits.push(until - t);
      t = until + 1;
    }
    expect(waits).toEqual([120_000, 240_000, 480_000, sideline.maxMs, sideline.maxMs, sideline.maxMs]);
    // A report while sidelined neither lengthens the sideline nor logs again within a minute.
    book.report(0, 'disagreeing', 'again', lastAt + 30_000);
    expect(Date.parse(book.health()[0]!.sidelinedUntil!)).toBe(lastAt + sideline.maxMs);
    expect(lines.map((l) => l.obj.provider)).toEqual(Array(7).fill('#1 rpc.one.example'));
    expect(JSON.stringify(lines)).not.toMatch(/SECRETKEY|pass|https:/);
  });

  it('reads as ok again once its sideline has passed and it answers; a quiet provider starts again from 60 s', () => {
    const book = new ProviderBook('USDT_TRON', 'test', urls);
    const t0 = 5_000_000;
    book.report(1, 'disagreeing', 'left out a transfer', t0);
    book.answered(1, t0 + 1_000);
    expect(book.health()[1]!.state).toBe('disagreeing');
    book.answered(1, t0 + 60_001);
    expect(book.health()[1]).toMatchObject({ state: 'ok', reason: null, sidelinedUntil: null });
    book.report(1, 'erroring', 'HTTP 502', t0 + 11 * 60_000 + 60_001);
    expect(book.health()[1]!.strikes).toBe(1);
  });
});
