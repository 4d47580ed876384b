import { describe, expect, it } from '@jest/globals';
import { HDKey } from '@scure/bip32';
import { computeAddress, HDNodeWallet } from 'ethers';
import { randomBytes } from 'node:crypto';
import { TronWeb } from 'tronweb';
import { maxIndex, type Branch } from '../../domain/hd/derive.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { validateAccountXpub } from '../../domain/hd/xpub.js';

/**
 * Property tests: our derivation (bip32 + tiny-secp256k1 + viem + our base58check) agrees with
 * independent implementations used only here — ethers' HDNodeWallet for EVM addresses, and
 * @scure/bip32 + ethers' address hashing + TronWeb's base58check for TRON — on random account
 * keys and thousands of random indexes. The run's seed is printed with any mismatch.
 */
const seed = randomBytes(4).readUInt32BE(0);

function mulberry32(a: number): () => number {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = mulberry32(seed);
const randomSeedBytes = () => Uint8Array.from({ length: 32 }, () => Math.floor(random() * 256));

function accountKeys(path: string, count: number): string[] {
  return Array.from({ length: count }, () => HDKey.fromMasterSeed(randomSeedBytes()).derive(path).publicExtendedKey);
}

/** Edges plus random indexes: half small (where merchants live), half over the whole range. */
function indexes(count: number): number[] {
  const out = [0, 1, maxIndex - 1, maxIndex];
  for (let i = 0; i < count; i++) out.push(Math.floor(random() * (i % 2 ? maxIndex + 1 : 10_000)));
  return out;
}

const perKey = 200;
// Generous: ethers' pure-JS derivation is slow on a loaded machine; this bounds a hang, not a speed.
const timeoutMs = 180_000;
const branches: Branch[] = [0, 1];

describe(`derivation agrees with independent implementations (seed ${seed})`, () => {
  it('EVM: ethers HDNodeWallet over random keys, both branches', () => {
    let checked = 0;
    for (const xpub of accountKeys("m/44'/60'/0'", 4)) {
      validateAccountXpub(xpub, 'evm');
      for (const branch of branches) {
        const theirs = HDNodeWallet.fromExtendedKey(xpub).deriveChild(branch);
        for (const index of indexes(perKey)) {
          const expected = theirs.deriveChild(index).address;
          const ours = deriveAddress(xpub, 'evm', branch, index);
          if (ours !== expected) expect({ seed, xpub, branch, index, ours }).toEqual({ seed, xpub, branch, index, ours: expected });
          checked++;
        }
      }
    }
    expect(checked).toBe(4 * 2 * (perKey + 4));
  }, timeoutMs);

  it('TRON: @scure/bip32 + TronWeb base58check over random keys, both branches', () => {
    let checked = 0;
    for (const xpub of accountKeys("m/44'/195'/0'", 4)) {
      validateAccountXpub(xpub, 'tron');
      for (const branch of branches) {
        const theirs = HDKey.fromExtendedKey(xpub).deriveChild(branch);
        for (const index of indexes(perKey)) {
          const evmHex = computeAddress(`0x${Buffer.from(theirs.deriveChild(index).publicKey!).toString('hex')}`);
          const expected = TronWeb.address.fromHex(`41${evmHex.slice(2)}`);
          const ours = deriveAddress(xpub, 'tron', branch, index);
          if (ours !== expected) expect({ seed, xpub, branch, index, ours }).toEqual({ seed, xpub, branch, index, ours: expected });
          checked++;
        }
      }
    }
    expect(checked).toBe(4 * 2 * (perKey + 4));
  }, timeoutMs);

  it('the two branches never give the same address for the same index', () => {
    const [xpub] = accountKeys("m/44'/60'/0'", 1);
    for (const index of indexes(50)) {
      expect(deriveAddress(xpub!, 'evm', 0, index)).not.toBe(deriveAddress(xpub!, 'evm', 1, index));
    }
  });
});
