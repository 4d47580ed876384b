import { describe, expect, it } from '@jest/globals';
import { watcherBounds } from '../../rails/chain/watcher-positions.js';
import { watcherCheck, withoutAddresses } from '../../services/system/chain-readiness.js';

/** The watcher bounds GET /ready applies (docs/operations.md, "Readiness"), and what its details may name. */
describe('watcher bounds', () => {
  const none = { pollMs: undefined, staleSeconds: undefined, lagBlocks: undefined };

  it('default to ten poll intervals (at least 60 s) and about ten minutes of polls in blocks (at least 100)', () => {
    expect(watcherBounds('USDT_BSC', none)).toEqual({ staleMs: 60_000, lagBlocks: 600 });
    expect(watcherBounds('USDT_ETH', none)).toEqual({ staleMs: 60_000, lagBlocks: 100 });
    expect(watcherBounds('USDT_TRON', none)).toEqual({ staleMs: 60_000, lagBlocks: 200 });
    expect(watcherBounds('USDT_POLYGON', none)).toEqual({ staleMs: 60_000, lagBlocks: 300 });
    expect(watcherBounds('USDT_SOL', none)).toEqual({ staleMs: 60_000, lagBlocks: 300 });
    // CHAIN_POLL_MS stretches the staleness bound; the lag bound follows the chain.
    expect(watcherBounds('USDT_ETH', { ...none, pollMs: 30_000 })).toEqual({ staleMs: 300_000, lagBlocks: 100 });
  });

  it('take the operator\'s settings when given', () => {
    expect(watcherBounds('USDT_ETH', { pollMs: 30_000, staleSeconds: 5, lagBlocks: 7 })).toEqual({ staleMs: 5_000, lagBlocks: 7 });
  });
});

describe('withoutAddresses', () => {
  it('removes addresses and host names from a provider failure, and keeps the rest', () => {
    expect(withoutAddresses('connect ECONNREFUSED 10.0.0.5:8545')).toBe('connect ECONNREFUSED <address>');
    expect(withoutAddresses('getaddrinfo ENOTFOUND acct-77.rpc.example.com')).toBe('getaddrinfo ENOTFOUND <address>');
    expect(withoutAddresses('connect ECONNREFUSED [::1]:8545')).toBe('connect ECONNREFUSED <address>');
    expect(withoutAddresses('HTTP request failed. Status: 500')).toBe('HTTP request failed. Status: 500');
    expect(withoutAddresses('head 120 is 50 blocks behind')).toBe('head 120 is 50 blocks behind');
  });
});

describe('a watcher\'s verdict', () => {
  const bounds = { staleMs: 60_000, lagBlocks: 600 };
  const now = 10_000_000;
  const read = { rail: 'USDT_BSC' as const, environment: 'live', headBlock: 1_000n, readToBlock: 990n, lastReadMs: now - 2_000, firstTickMs: now - 100_000, failure: null, failingSinceMs: null };

  it('is ok within both bounds, with the numbers', () => {
    expect(watcherCheck(read, undefined, bounds, now)).toMatchObject({
      name: 'watcher:USDT_BSC:live',
      ok: true,
      detail: 'Read to block 990 of 1000 (10 behind, bound 600), 2 s ago (bound 60 s).',
      watcher: { headBlock: 1000, readToBlock: 990, lagBlocks: 10, lastReadSecondsAgo: 2, failing: null, bounds: { staleSeconds: 60, lagBlocks: 600 } },
    });
  });

  it('is not ok when its own fresh read trails the head by more than the bound', () => {
    const behind = { ...read, readToBlock: 300n };
    expect(watcherCheck(behind, undefined, bounds, now)).toMatchObject({ ok: false, detail: 'It trails the head by 700 blocks (bound 600): read to 300 of 1000.' });
  });

  it('is not ok when nothing read the chain within the bound, saying why its ticks fail and since when', () => {
    const failing = { ...read, lastReadMs: now - 90_000, failure: 'unreachable' as const, failingSinceMs: now - 88_000 };
    expect(watcherCheck(failing, 89_000, bounds, now)).toMatchObject({
      ok: false,
      detail: `It last read its chain 89 s ago (bound 60 s); its node cannot be reached since ${new Date(now - 88_000).toISOString()}.`,
      watcher: { failing: 'unreachable', lastReadSecondsAgo: 89 },
    });
  });

  it('is ok while another worker reads the chain, and does not judge the lag of its own old read', () => {
    const old = { ...read, readToBlock: 100n, lastReadMs: now - 90_000 };
    expect(watcherCheck(old, 1_000, bounds, now)).toMatchObject({ ok: true, watcher: { lastReadSecondsAgo: 1 } });
  });

  it('counts the time since its first tick before any read', () => {
    const never = { ...read, headBlock: null, readToBlock: null, lastReadMs: null, firstTickMs: now - 61_000, failure: 'failed' as const, failingSinceMs: now - 61_000 };
    expect(watcherCheck(never, undefined, bounds, now)).toMatchObject({
      ok: false,
      detail: `It has not read its chain in the 61 s since its first tick here (bound 60 s); its ticks fail since ${new Date(now - 61_000).toISOString()}.`,
      watcher: { headBlock: null, lagBlocks: null, lastReadSecondsAgo: null },
    });
    expect(watcherCheck({ ...never, firstTickMs: now - 1_000, failure: null, failingSinceMs: null }, undefined, bounds, now)).toMatchObject({ ok: true, detail: 'No block read yet.' });
  });
});
