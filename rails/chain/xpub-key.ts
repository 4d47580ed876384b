import { receiveBranch } from '../../domain/hd/derive.js';
import { deriveAddress } from './derive-address.js';
import { accountPaths, validateAccountXpub, XpubError, type WalletKind } from '../../domain/hd/xpub.js';
import { StoreKeyError, type WalletKey } from '../payment-method.js';

/**
 * The store key of a family paid to derived addresses (TRON, EVM): an account-level xpub, one
 * store's only (its addresses must never reach two stores), checked by domain/hd/xpub.ts.
 */
export function xpubWalletKey(kind: WalletKind): WalletKey {
  const path = (index: number) => `${accountPaths[kind]}/${receiveBranch}/${index}`;
  return {
    slot: kind,
    input: 'xpub',
    accountPath: accountPaths[kind],
    exclusive: true,
    parse(raw) {
      try {
        const { xpub } = validateAccountXpub(raw, kind);
        return { key: xpub, firstAddress: deriveAddress(xpub, kind, receiveBranch, 0), firstAddressPath: path(0) };
      } catch (err) {
        if (err instanceof XpubError) throw new StoreKeyError(err.message);
        throw err;
      }
    },
    receiveAddresses: (key, from, count) =>
      Array.from({ length: count }, (_, i) => ({ index: from + i, path: path(from + i), address: deriveAddress(key, kind, receiveBranch, from + i) })),
  };
}
