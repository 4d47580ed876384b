import { BoundedCache } from '../../domain/bounded-cache.js';
import { derivePublicKey, receiveBranch, type Branch } from '../../domain/hd/derive.js';
import type { WalletKind } from '../../domain/hd/xpub.js';
import { evmAddress } from '../evm/address.js';
import { tronAddress } from '../tron/address.js';

/** How each xpub family writes a public key as an address (rails/evm/address.ts, rails/tron/address.ts). */
const encoders: Readonly<Record<WalletKind, (uncompressed64: Uint8Array) => string>> = { evm: evmAddress, tron: tronAddress };

/** The address at `<xpub>/<branch>/<index>` for a TRON or EVM account key (validated beforehand). */
export function deriveAddress(xpub: string, kind: WalletKind, branch: Branch, index: number): string {
  return encoders[kind](derivePublicKey(xpub, branch, index));
}

/** Receive-branch addresses this process derived lately, by family, index and key: at most this many. */
export const receiveAddressCacheLimit = 20_000;
const receiveAddresses = new BoundedCache<string, string>(receiveAddressCacheLimit);

/**
 * The address at `<xpub>/0/<index>`, as `deriveAddress` answers it, remembered: an address is a
 * function of the key, the family and the index alone, so a remembered one is never stale (a key
 * rolled is another key). A merchant's backend asks POST /v1/wallets/derive for the same user's
 * index again and again (each time the user opens their deposit page), and the gap fill after a
 * new highest index derives the next indexes before they are asked for; both then skip the
 * elliptic-curve work, most of a derive's CPU. At most `receiveAddressCacheLimit` are kept
 * (about 5 MB), the least recently used forgotten first. Bulk derivations (the legacy backfill, an xpub's
 * address list) call `deriveAddress` and keep nothing.
 */
export function receiveAddress(xpub: string, kind: WalletKind, index: number): string {
  const key = `${kind}\u0000${index}\u0000${xpub}`;
  let address = receiveAddresses.get(key);
  if (address === undefined) {
    address = deriveAddress(xpub, kind, receiveBranch, index);
    receiveAddresses.set(key, address);
  }
  return address;
}

/** How many receive-branch addresses are remembered now (tests: the bound holds). */
export function rememberedReceiveAddresses(): number {
  return receiveAddresses.size;
}
