import { BIP32Factory, type BIP32Interface } from 'bip32';
import * as ecc from 'tiny-secp256k1';
import { evmAddress, tronAddress } from './address.js';
import type { WalletKind } from './xpub.js';

const bip32 = BIP32Factory(ecc);

/** `0` is the receive branch (the derive endpoint); `1` is ours, for payment links and invoices. */
export type Branch = 0 | 1;
export const receiveBranch: Branch = 0;
export const linkBranch: Branch = 1;

export const maxIndex = 0x7fffffff;

export function isValidIndex(index: unknown): index is number {
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index <= maxIndex;
}

/**
 * Parsed branch nodes are cached (bounded), so each address costs one child derivation: parsing
 * an xpub and stepping to the branch doubles the cost otherwise (research/perf.md §2).
 */
const branchCache = new Map<string, BIP32Interface>();
const cacheLimit = 2_000;

function branchNode(xpub: string, branch: Branch): BIP32Interface {
  const key = `${branch}:${xpub}`;
  let node = branchCache.get(key);
  if (!node) {
    node = bip32.fromBase58(xpub).derive(branch);
    if (branchCache.size >= cacheLimit) branchCache.delete(branchCache.keys().next().value!);
    branchCache.set(key, node);
  }
  return node;
}

/** The address at `<xpub>/<branch>/<index>` for a TRON or EVM account key (validated beforehand). */
export function deriveAddress(xpub: string, kind: WalletKind, branch: Branch, index: number): string {
  if (!isValidIndex(index)) throw new RangeError(`index must be an integer from 0 to ${maxIndex}`);
  const child = branchNode(xpub, branch).derive(index);
  const uncompressed = ecc.pointCompress(child.publicKey, false).subarray(1);
  return kind === 'evm' ? evmAddress(uncompressed) : tronAddress(uncompressed);
}
