import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../config/config.js';

describe('config: live rates and idempotency leases', () => {
  it('has safe defaults: two public sources, a 50–500 band, 2% agreement, 10% jump, a 30 s lease', () => {
    const c = loadConfig({});
    expect(c.rates).toEqual({ sources: ['coingecko', 'coinbase'], minKesPerUsdt: 50, maxKesPerUsdt: 500, maxSpreadPercent: 2, maxJumpPercent: 10 });
    expect(c.idempotencyLeaseSeconds).toBe(30);
  });

  it('takes sources as names or URLs and refuses anything else, and a band that is empty', () => {
    expect(loadConfig({ RATE_SOURCES: 'coinbase, https://rates.example/kes' }).rates.sources).toEqual(['coinbase', 'https://rates.example/kes']);
    expect(() => loadConfig({ RATE_SOURCES: 'coingecko,binance' })).toThrow(/RATE_SOURCES: 'binance' is neither/);
    expect(() => loadConfig({ RATE_MIN_KES_PER_USDT: '200', RATE_MAX_KES_PER_USDT: '150' })).toThrow(ConfigError);
    expect(() => loadConfig({ IDEMPOTENCY_LEASE_SECONDS: '0' })).toThrow(/IDEMPOTENCY_LEASE_SECONDS/);
  });
});
