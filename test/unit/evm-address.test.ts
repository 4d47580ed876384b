import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import { checksummedAddress } from '../../rails/evm/address.js';

/** EIP-55 written in rails/evm/address.ts: the EIP's own examples, and viem's answer for any account. */
describe('checksummedAddress (EIP-55)', () => {
  it('answers the examples published in EIP-55', () => {
    for (const address of [
      // All caps, all lower, and mixed, as the EIP lists them.
      '0x52908400098527886E0F7030069857D2E4169EE7',
      '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
      '0xde709f2102306220921060314715629080e2fb77',
      '0x27b1fdb04752bbc536007a920d24acb045561c26',
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    ]) {
      expect(checksummedAddress(Buffer.from(address.slice(2), 'hex'))).toBe(address);
    }
  });

  it('answers as viem getAddress for 5,000 random accounts, the zero one and the all-ones one, from any view of the bytes', () => {
    const accounts = [Buffer.alloc(20, 0), Buffer.alloc(20, 0xff), ...Array.from({ length: 5_000 }, () => randomBytes(20))];
    for (const a of accounts) expect(checksummedAddress(a)).toBe(getAddress(`0x${a.toString('hex')}`));
    // A 20-byte view inside a larger buffer (as the keccak tail is) reads only its own bytes.
    const big = randomBytes(32);
    expect(checksummedAddress(big.subarray(12))).toBe(getAddress(`0x${big.subarray(12).toString('hex')}`));
    expect(checksummedAddress(new Uint8Array(big.buffer, big.byteOffset + 12, 20))).toBe(getAddress(`0x${big.subarray(12).toString('hex')}`));
  });

  it('refuses anything but 20 bytes', () => {
    for (const n of [0, 19, 21, 32]) expect(() => checksummedAddress(new Uint8Array(n))).toThrow(RangeError);
  });
});
