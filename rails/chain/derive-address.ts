import { derivePublicKey, type Branch } from '../../domain/hd/derive.js';
import type { WalletKind } from '../../domain/hd/xpub.js';
import { evmAddress } from '../evm/address.js';
import { tronAddress } from '../tron/address.js';

/** How each xpub family writes a public key as an address (rails/evm/address.ts, rails/tron/address.ts). */
const encoders: Readonly<Record<WalletKind, (uncompressed64: Uint8Array) => string>> = { evm: evmAddress, tron: tronAddress };

/** The address at `<xpub>/<branch>/<index>` for a TRON or EVM account key (validated beforehand). */
export function deriveAddress(xpub: string, kind: WalletKind, branch: Branch, index: number): string {
  return encoders[kind](derivePublicKey(xpub, branch, index));
}
