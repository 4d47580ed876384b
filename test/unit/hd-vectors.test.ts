import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { deriveAddress } from '../../domain/hd/derive.js';
import { validateAccountXpub } from '../../domain/hd/xpub.js';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/hd/abandon-about.json', import.meta.url), 'utf8'));

describe('HD derivation against the published abandon…about vectors', () => {
  for (const chain of fixture.chains as { chain: 'evm' | 'tron'; accountXpub: string; addresses: { index: number; address: string }[] }[]) {
    it(`derives the ${chain.chain} receive addresses`, () => {
      validateAccountXpub(chain.accountXpub, chain.chain);
      for (const { index, address } of chain.addresses) {
        expect(deriveAddress(chain.accountXpub, chain.chain, 0, index)).toBe(address);
      }
    });
  }
});
