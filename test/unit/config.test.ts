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
    expect(loadConfig({ CONFIRMATIONS_USDT_TRON: '19' }).railOverrides.CONFIRMATIONS_USDT_TRON).toBe('19');
  });

  it('collects per-rail overrides', () => {
    const c = loadConfig({ RPC_URL_USDT_BSC_TEST: 'http://127.0.0.1:8545', CONFIRMATIONS_USDT_ETH: '3', OTHER: 'x' });
    expect(c.railOverrides).toEqual({ RPC_URL_USDT_BSC_TEST: 'http://127.0.0.1:8545', CONFIRMATIONS_USDT_ETH: '3' });
  });
});
