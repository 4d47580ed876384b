import { BIP32Factory, type BIP32Interface } from 'bip32';
import * as ecc from 'tiny-secp256k1';

const bip32 = BIP32Factory(ecc);

/** `0` is the receive branch (the derive endpoint); `1` is ours, for payment links and invoices. */
export type Branch = 0 | 1;
export const receiveBranch: Branch = 0;
export const linkBranch: Branch = 1;

/** The highest non-hardened index: 2^31 − 1. Hardened indexes need the private key. */
export const maxIndex = 0x7fffffff;

export const indexRule = `an integer from 0 to ${maxIndex} (hardened indexes, 2^31 and above, need the private key)`;

export function isValidIndex(index: unknown): index is number {
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index <= maxIndex;
}

function assertIndex(index: number): void {
  if (!isValidIndex(index)) throw new RangeError(`index must be ${indexRule}; got ${String(index)}`);
}

/** One public child step (BIP32 CKDpub). Refuses hardened and malformed indexes itself. */
function publicChild(parent: BIP32Interface, index: number): BIP32Interface {
  assertIndex(index);
  return parent.derive(index);
}

/**
 * The serialized extended public key of `<xpub>/<index>`: the primitive `derivePublicKey` is built
 * on, exposed so BIP32's published vectors can check each public step.
 */
export function deriveChildXpub(xpub: string, index: number): string {
  return publicChild(bip32.fromBase58(xpub), index).neutered().toBase58();
}

/**
 * Parsed branch nodes are cached (bounded, least recently used goes first), so each address
 * costs one child derivation: parsing an xpub and stepping to the branch doubles the cost
 * otherwise (research/perf.md §2).
 */
const branchCache = new Map<string, BIP32Interface>();
const cacheLimit = 2_000;

function branchNode(xpub: string, branch: Branch): BIP32Interface {
  const key = `${branch}:${xpub}`;
  let node = branchCache.get(key);
  if (node) {
    branchCache.delete(key);
  } else {
    node = publicChild(bip32.fromBase58(xpub), branch);
    if (branchCache.size >= cacheLimit) branchCache.delete(branchCache.keys().next().value!);
  }
  branchCache.set(key, node);
  return node;
}

/**
 * The 64-byte uncompressed secp256k1 public key (without the 0x04 prefix) at
 * `<xpub>/<branch>/<index>`, for a key validated beforehand. Turning it into an address is the
 * rail's (rails/tron/address.ts, rails/evm/address.ts; rails/chain/derive-address.ts).
 */
export function derivePublicKey(xpub: string, branch: Branch, index: number): Uint8Array {
  assertIndex(index);
  const child = publicChild(branchNode(xpub, branch), index);
  return ecc.pointCompress(child.publicKey, false).subarray(1);
}
