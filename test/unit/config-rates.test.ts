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

  it('native coin prices: CoinGecko and Coinbase by default, either at another base URL, fixed test prices as COIN=price', () => {
    expect(loadConfig({}).nativePrices).toEqual({ sources: ['coingecko', 'coinbase'], testPrices: {} });
    const c = loadConfig({ NATIVE_PRICE_SOURCES: 'coingecko@http://127.0.0.1:9/gecko, coinbase', TEST_NATIVE_USD_PRICES: 'BNB=612.34, ETH = 3000' });
    expect(c.nativePrices).toEqual({ sources: ['coingecko@http://127.0.0.1:9/gecko', 'coinbase'], testPrices: { BNB: '612.34', ETH: '3000' } });
    expect(() => loadConfig({ NATIVE_PRICE_SOURCES: 'binance' })).toThrow(/NATIVE_PRICE_SOURCES: 'binance' is neither/);
    expect(() => loadConfig({ NATIVE_PRICE_SOURCES: 'coinbase@ftp://x' })).toThrow(/NATIVE_PRICE_SOURCES/);
    expect(() => loadConfig({ TEST_NATIVE_USD_PRICES: 'BNB=6e2' })).toThrow(/TEST_NATIVE_USD_PRICES: 'BNB=6e2'/);
  });
});
