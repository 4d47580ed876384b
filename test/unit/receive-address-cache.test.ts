import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { deriveAddress, receiveAddress, receiveAddressCacheLimit, rememberedReceiveAddresses } from '../../rails/chain/derive-address.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';

/**
 * The remembered receive-branch addresses POST /v1/wallets/derive and the gap fill answer from
 * (rails/chain/derive-address.ts): always what derivation answers, never another key's or another
 * family's, and never more of them than the bound.
 */
const fixture = JSON.parse(readFileSync(new URL('../fixtures/hd/abandon-about.json', import.meta.url), 'utf8'));

describe('remembered receive addresses', () => {
  it('answer the published addresses, first derived and then remembered', () => {
    for (const chain of fixture.chains as { chain: 'evm' | 'tron'; accountXpub: string; addresses: { index: number; address: string }[] }[]) {
      for (let pass = 0; pass < 2; pass++) {
        for (const { index, address } of chain.addresses) expect(receiveAddress(chain.accountXpub, chain.chain, index)).toBe(address);
      }
    }
  });

  it('keep keys, families and indexes apart, and are the receive branch only', () => {
    const a = randomAccountXpubs();
    const b = randomAccountXpubs();
    for (const index of [0, 1, 19, 20, 2_147_483_647]) {
      for (let pass = 0; pass < 2; pass++) {
        expect(receiveAddress(a.evm, 'evm', index)).toBe(deriveAddress(a.evm, 'evm', 0, index));
        expect(receiveAddress(b.evm, 'evm', index)).toBe(deriveAddress(b.evm, 'evm', 0, index));
        expect(receiveAddress(a.tron, 'tron', index)).toBe(deriveAddress(a.tron, 'tron', 0, index));
        // One key registered for both families derives the same public key: each family's encoding.
        expect(receiveAddress(a.evm, 'tron', index)).toBe(deriveAddress(a.evm, 'tron', 0, index));
      }
      expect(receiveAddress(a.evm, 'evm', index)).not.toBe(receiveAddress(b.evm, 'evm', index));
      expect(receiveAddress(a.evm, 'evm', index)).not.toBe(deriveAddress(a.evm, 'evm', 1, index));
    }
    expect(receiveAddress(a.evm, 'evm', 1)).not.toBe(receiveAddress(a.evm, 'evm', 11));
  });

  it('refuse an index that is not a receive index, and remember nothing for it', () => {
    const { evm } = randomAccountXpubs();
    const before = rememberedReceiveAddresses();
    for (const index of [-1, 2 ** 31, 1.5, Number.NaN]) expect(() => receiveAddress(evm, 'evm', index)).toThrow();
    expect(rememberedReceiveAddresses()).toBe(before);
  });

  it('never hold more than the bound, and answer a forgotten address again as derived', () => {
    const { evm } = randomAccountXpubs();
    const first = receiveAddress(evm, 'evm', 0);
    for (let index = 1; index <= receiveAddressCacheLimit + 50; index++) receiveAddress(evm, 'evm', index);
    expect(rememberedReceiveAddresses()).toBe(receiveAddressCacheLimit);
    // Index 0 was forgotten first; asked again, it is derived again, the same.
    expect(receiveAddress(evm, 'evm', 0)).toBe(first);
    expect(rememberedReceiveAddresses()).toBe(receiveAddressCacheLimit);
  });
});
