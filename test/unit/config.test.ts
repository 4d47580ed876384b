import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../config/config.js';

describe('config', () => {
  it('derives the public and checkout URLs from PORT', () => {
    const c = loadConfig({ PORT: '4000' });
    expect(c.publicBaseUrl).toBe('http://localhost:4000');
    expect(c.checkoutBaseUrl).toBe('http://localhost:4000');
    expect(c.keyPrefix).toBe('sk');
    expect(c.databaseUrl).toBeUndefined();
  });

  it('reports every problem at once', () => {
    expect(() => loadConfig({ PORT: 'x', KEY_PREFIX: 'SK!', PUBLIC_BASE_URL: 'nope' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'x', KEY_PREFIX: 'SK!', PUBLIC_BASE_URL: 'nope' });
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(3);
    }
  });

  it('refuses a malformed confirmation depth at boot rather than in a running watcher', () => {
    expect(() => loadConfig({ CONFIRMATIONS_USDT_BSC: 'three' })).toThrow(/CONFIRMATIONS_USDT_BSC: must be a whole number/);
    expect(() => loadConfig({ CONFIRMATIONS_USDT_BTC: '3' })).toThrow(/unknown setting/);
    expect(loadConfig({ CONFIRMATIONS_USDT_TRON: '19' }).rails.USDT_TRON.confirmations).toBe(19);
  });

  it('parses per-rail overrides once into typed settings per rail and environment', () => {
    const c = loadConfig({ RPC_URL_USDT_BSC_TEST: 'http://127.0.0.1:8545', CONFIRMATIONS_USDT_ETH: '3', OTHER: 'x' });
    expect(c.rails.USDT_BSC.endpoints.test.rpcUrl).toBe('http://127.0.0.1:8545');
    expect(c.rails.USDT_BSC.endpoints.live.rpcUrl).toBe('https://bsc-dataseed.bnbchain.org');
    expect(c.rails.USDT_BSC.confirmations).toBeUndefined();
    expect(c.rails.USDT_ETH.confirmations).toBe(3);
    expect(Object.keys(c.rails).sort()).toEqual(['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL', 'USDT_TRON']);
    expect(Object.isFrozen(c.rails.USDT_BSC.endpoints.test)).toBe(true);
  });
});
