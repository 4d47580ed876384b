import { describe, expect, it } from '@jest/globals';
import { loadConfig as load } from '../../config/config.js';

// A deployment with its own database and Temporal: the setting is for those behind a proxy.
const loadConfig = (env: Record<string, string>) => load({ DATABASE_URL: 'postgres://db/malipo', TEMPORAL_ADDRESS: 'temporal:7233', ...env });

describe('TRUST_PROXY', () => {
  it('is off unless set: no forwarded header is believed', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'off' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
  });

  it('refuses a hop count, which cannot check the peer, and says what to give instead', () => {
    // Fastify 5 ignores a numeric trustProxy for this reason: accepting one would silently trust nobody.
    expect(() => loadConfig({ TRUST_PROXY: '1' })).toThrow(/TRUST_PROXY: '1' is a number of hops, which cannot be checked: .*List the proxies' addresses or CIDR ranges/);
    expect(() => loadConfig({ TRUST_PROXY: ' 2 ' })).toThrow(/'2' is a number of hops/);
  });

  it('takes a list of addresses, CIDR ranges and the named ranges', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1 , fd00::/8,loopback,uniquelocal' }).trustProxy).toEqual([
      '10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8', 'loopback', 'uniquelocal',
    ]);
  });

  it.each([
    ['true', /TRUST_PROXY: .*trusting every peer lets any client choose its address/],
    ['*', /TRUST_PROXY: .*trusting every peer/],
    ['10.0.0.0/33', /TRUST_PROXY: '10.0.0.0\/33' is not an IP address, a CIDR range/],
    ['proxy.internal', /TRUST_PROXY: 'proxy.internal' is not an IP address/],
    ['-1', /TRUST_PROXY: '-1' is not an IP address/],
    ['1.5', /TRUST_PROXY: '1.5' is not an IP address/],
    ['10.0.0.1,,10.0.0.2', /TRUST_PROXY: an empty entry/],
  ])('refuses %s at boot, saying what it takes', (value, message) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(message);
  });
});
