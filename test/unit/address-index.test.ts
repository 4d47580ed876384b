import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { AddressIndex, notHex } from '../../rails/chain/address-index.js';

/** Mixed case, as a log or a row may write it. */
const mixedCase = (hex: string) => [...hex].map((c, i) => (i % 3 === 0 ? c.toUpperCase() : c)).join('');

describe('the 20-byte address index', () => {
  it('finds every address it holds, by bytes and by hex in any case, through many rehashes', () => {
    const index = new AddressIndex();
    const keys = Array.from({ length: 20_000 }, () => randomBytes(20));
    keys.forEach((k, slot) => index.insert(k, slot));
    keys.forEach((k, slot) => {
      expect(index.find(k)).toBe(slot);
      expect(index.findHex(k.toString('hex'), 0)).toBe(slot);
      expect(index.findHex(`0x${mixedCase(k.toString('hex'))}`, 2)).toBe(slot);
    });
    for (let i = 0; i < 1_000; i++) {
      const other = randomBytes(20);
      expect(index.find(other)).toBe(-1);
      expect(index.findHex(other.toString('hex'), 0)).toBe(-1);
    }
  });

  it('keeps apart addresses that share their first bytes (one probe chain), and their near misses', () => {
    const index = new AddressIndex();
    const prefix = randomBytes(4);
    const keys = Array.from({ length: 3_000 }, () => Buffer.concat([prefix, randomBytes(16)]));
    keys.forEach((k, slot) => index.insert(k, slot));
    keys.forEach((k, slot) => expect(index.findHex(k.toString('hex'), 0)).toBe(slot));
    const nearMiss = Buffer.from(keys[7]!);
    nearMiss[19] = nearMiss[19]! ^ 1;
    expect(index.find(nearMiss)).toBe(-1);
    expect(index.findHex(nearMiss.toString('hex'), 0)).toBe(-1);
  });

  it('says when a string is no hex address, wherever the bad character is, and never matches it', () => {
    const index = new AddressIndex();
    const key = randomBytes(20);
    index.insert(key, 0);
    const hex = key.toString('hex');
    for (const at of [0, 1, 7, 8, 21, 39]) {
      for (const bad of ['g', 'x', ' ', 'é', '\u0000', '０']) {
        expect(index.findHex(`${hex.slice(0, at)}${bad}${hex.slice(at + 1)}`, 0)).toBe(notHex);
      }
    }
  });
});
