import { BIP32Factory, type BIP32Interface } from 'bip32';
import { createHmac } from 'node:crypto';
import * as ecc from 'tiny-secp256k1';
import { BoundedCache } from '../bounded-cache.js';

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
 * A branch node, parsed once: its public key in both forms and its chain code. Cached (bounded,
 * least recently used goes first), so each address costs one child step: parsing an xpub and
 * stepping to the branch doubles the cost otherwise (research/perf.md §2).
 */
interface BranchKey {
  readonly compressed: Uint8Array;
  readonly uncompressed: Uint8Array;
  readonly chainCode: Uint8Array;
}

const branchCache = new BoundedCache<string, BranchKey>(2_000);

function branchKey(xpub: string, branch: Branch): BranchKey {
  const key = `${branch}:${xpub}`;
  let node = branchCache.get(key);
  if (node === undefined) {
    const parsed = publicChild(bip32.fromBase58(xpub), branch);
    node = { compressed: parsed.publicKey, uncompressed: ecc.pointCompress(parsed.publicKey, false), chainCode: parsed.chainCode };
    branchCache.set(key, node);
  }
  return node;
}

/**
 * BIP32's CKDpub from a branch node straight to the child's uncompressed public key:
 * `I = HMAC-SHA512(chain code, serP(K) ‖ ser32(i))`, `K_i = point(I_L) + K`. It is the step
 * `BIP32Interface.derive` takes, without what an address does not need from it (the parent's
 * fingerprint, a second on-curve check of the result, the compressed form decompressed again):
 * a third of the time per address. As BIP32 and the bip32 package do, an `I_L` of n or more, or
 * a child at infinity (each about 2^-127 likely), moves on to the next index.
 */
function childPublicKey(parent: BranchKey, index: number): Uint8Array {
  const data = Buffer.allocUnsafe(37);
  data.set(parent.compressed, 0);
  for (let i = index; ; i++) {
    assertIndex(i);
    data.writeUInt32BE(i, 33);
    const il = createHmac('sha512', parent.chainCode).update(data).digest().subarray(0, 32);
    if (!ecc.isPrivate(il)) continue;
    const child = ecc.pointAdd(parent.uncompressed, ecc.pointFromScalar(il, false)!, false);
    if (child) return child.subarray(1);
  }
}

/**
 * The 64-byte uncompressed secp256k1 public key (without the 0x04 prefix) at
 * `<xpub>/<branch>/<index>`, for a key validated beforehand. Turning it into an address is the
 * rail's (rails/tron/address.ts, rails/evm/address.ts; rails/chain/derive-address.ts).
 */
export function derivePublicKey(xpub: string, branch: Branch, index: number): Uint8Array {
  assertIndex(index);
  return childPublicKey(branchKey(xpub, branch), index);
}
