import { createHash } from 'node:crypto';
import bs58 from 'bs58';

/**
 * Explicit validation of an account-level extended public key. Libraries are lenient (they
 * parse `tpub`, ignore depth, accept private keys), so every rule is checked here and each
 * refusal says which key to export instead.
 */
export type WalletKind = 'tron' | 'evm';

export const accountPaths: Record<WalletKind, string> = { tron: "m/44'/195'/0'", evm: "m/44'/60'/0'" };

const versions: Record<number, { name: string; private: boolean }> = {
  0x0488b21e: { name: 'xpub', private: false },
  0x0488ade4: { name: 'xprv', private: true },
  0x043587cf: { name: 'tpub', private: false },
  0x04358394: { name: 'tprv', private: true },
  0x049d7cb2: { name: 'ypub', private: false },
  0x049d7878: { name: 'yprv', private: true },
  0x04b24746: { name: 'zpub', private: false },
  0x04b2430c: { name: 'zprv', private: true },
  0x044a5262: { name: 'upub', private: false },
  0x045f1cf6: { name: 'vpub', private: false },
};

export class XpubError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XpubError';
  }
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest();

export interface ValidXpub {
  xpub: string;
  depth: number;
}

export function validateAccountXpub(input: string, kind: WalletKind): ValidXpub {
  const exportHint = `Export the account-level extended public key (xpub…) at ${accountPaths[kind]} from your wallet.`;
  const value = input.trim();
  let raw: Uint8Array;
  try {
    raw = bs58.decode(value);
  } catch {
    throw new XpubError(`Not an extended public key: it is not valid base58. ${exportHint}`);
  }
  if (raw.length !== 82) throw new XpubError(`Not an extended public key: it decodes to ${raw.length} bytes, not 82. ${exportHint}`);
  const payload = raw.subarray(0, 78);
  if (!sha256(sha256(payload)).subarray(0, 4).equals(Buffer.from(raw.subarray(78)))) {
    throw new XpubError(`The extended key's checksum is wrong: it was mistyped or truncated. ${exportHint}`);
  }
  const version = Buffer.from(payload).readUInt32BE(0);
  const known = versions[version];
  if (!known) throw new XpubError(`Unknown extended key version 0x${version.toString(16)}. ${exportHint}`);
  if (known.private) {
    throw new XpubError(`This is a private key (${known.name}). Never share it: Malipo needs only the public key. ${exportHint}`);
  }
  if (known.name !== 'xpub') {
    throw new XpubError(
      `${known.name} keys are not accepted: ${known.name === 'tpub' ? 'EVM and TRON wallets use xpub version bytes on every network, test networks included' : `${known.name} is a Bitcoin SegWit format`}. ${exportHint}`,
    );
  }
  const depth = payload[4]!;
  const childNumber = Buffer.from(payload).readUInt32BE(9);
  if (depth !== 3) {
    const what = depth === 0 ? 'a master key (depth 0)' : depth === 4 ? `a branch key (depth 4, ${accountPaths[kind]}/0)` : `at depth ${depth}`;
    throw new XpubError(`The key is ${what}; the account-level key has depth 3. ${exportHint}`);
  }
  if (childNumber < 0x80000000) {
    throw new XpubError(`The key was derived without hardening; an account key ends in a hardened index (0'). ${exportHint}`);
  }
  if (payload[45] !== 0x02 && payload[45] !== 0x03) {
    throw new XpubError(`The key data is not a compressed public key. ${exportHint}`);
  }
  return { xpub: value, depth };
}
