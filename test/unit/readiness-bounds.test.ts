import { describe, expect, it } from '@jest/globals';
import { watcherBounds } from '../../rails/chain/watcher-positions.js';
import { withoutAddresses } from '../../services/system/chain-readiness.js';

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
