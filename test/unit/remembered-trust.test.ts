import { describe, expect, it } from '@jest/globals';
import proxyAddr from '@fastify/proxy-addr';
import { rememberedTrust } from '../../api/app.js';

/**
 * TRUST_PROXY's answers, remembered per address (api/app.ts): the same answer proxy-addr's own
 * compiled list gives, for every kind of entry and address, asked once or many times, and still
 * right after more addresses than it keeps.
 */
describe('rememberedTrust', () => {
  const list = ['10.0.0.0/8', '192.168.1.7', 'loopback', 'fd00::/8'];
  const addresses = [
    '10.1.2.3', '10.255.255.255', '11.0.0.1', '192.168.1.7', '192.168.1.8', '127.0.0.1', '::1', '::ffff:127.0.0.1',
    '::ffff:10.9.9.9', 'fd12::1', 'fe80::1', '203.0.113.9', 'not-an-address', '',
  ];

  it('answers as the compiled list does, for every address, asked again and again', () => {
    const compiled = proxyAddr.compile([...list]);
    const remembered = rememberedTrust(list);
    for (let round = 0; round < 3; round++) {
      for (const [hop, address] of addresses.entries()) expect([address, remembered(address, hop)]).toEqual([address, compiled(address, hop)]);
    }
    expect(addresses.filter((a) => remembered(a, 0))).toEqual(['10.1.2.3', '10.255.255.255', '192.168.1.7', '127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:10.9.9.9', 'fd12::1']);
  });

  it('stays right past the number of addresses it keeps (a client sending a new X-Forwarded-For each time)', () => {
    const remembered = rememberedTrust(list);
    for (let i = 0; i < 10_000; i++) {
      const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      expect(remembered(address, 1)).toBe(true);
      expect(remembered(`11.0.${(i >> 8) & 255}.${i & 255}`, 1)).toBe(false);
    }
    expect(remembered('127.0.0.1', 0)).toBe(true);
    expect(remembered('203.0.113.9', 0)).toBe(false);
  });
});
