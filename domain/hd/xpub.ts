import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import * as ecc from 'tiny-secp256k1';

/**
 * Explicit validation of an account-level extended public key. Libraries are lenient (they
 * parse `tpub`, ignore depth, accept private keys, and ethers skips the checksum), so every
 * rule is checked here and each refusal says which key to export instead.
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
  0x044a4e28: { name: 'uprv', private: true },
  0x045f1cf6: { name: 'vpub', private: false },
  0x045f18bc: { name: 'vprv', private: true },
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

/** Serialized layout (BIP32): version 4 ‖ depth 1 ‖ parent fingerprint 4 ‖ child number 4 ‖ chain code 32 ‖ key 33. */
function decodeChecked(value: string, hint: string): Buffer {
  if (value === '') throw new XpubError(`The extended public key is empty. ${hint}`);
  let raw: Uint8Array;
  try {
    raw = bs58.decode(value);
  } catch {
    throw new XpubError(`Not an extended public key: it is not valid base58 (letters 0, O, I and l never appear). ${hint}`);
  }
  if (raw.length !== 82) throw new XpubError(`Not an extended public key: it decodes to ${raw.length} bytes, not 82. ${hint}`);
  const payload = Buffer.from(raw.subarray(0, 78));
  if (!sha256(sha256(payload)).subarray(0, 4).equals(Buffer.from(raw.subarray(78)))) {
    throw new XpubError(`The extended key's checksum is wrong: it was mistyped or truncated. ${hint}`);
  }
  return payload;
}

function checkVersion(payload: Buffer, hint: string): void {
  const version = payload.readUInt32BE(0);
  const known = versions[version];
  if (!known) throw new XpubError(`Unknown extended key version 0x${version.toString(16).padStart(8, '0')}. ${hint}`);
  if (known.private) {
    throw new XpubError(`This is a private key (${known.name}). Never share it: Malipo needs only the public key. ${hint}`);
  }
  if (known.name === 'tpub') {
    throw new XpubError(`tpub keys are not accepted: EVM and TRON wallets use xpub version bytes on every network, test networks included. ${hint}`);
  }
  if (known.name !== 'xpub') {
    throw new XpubError(`${known.name} keys are not accepted: ${known.name} is a Bitcoin SegWit format, not an EVM or TRON account key. ${hint}`);
  }
}

function checkAccountLevel(payload: Buffer, kind: WalletKind, hint: string): void {
  const depth = payload[4]!;
  if (depth !== 3) {
    const what =
      depth === 0 ? 'a master key (depth 0), which would expose every account of the wallet'
      : depth === 4 ? `a branch key (depth 4, ${accountPaths[kind]}/0)`
      : `at depth ${depth}`;
    throw new XpubError(`The key is ${what}; the account-level key has depth 3. ${hint}`);
  }
  if (payload.readUInt32BE(9) < 0x80000000) {
    throw new XpubError(`The key was derived without hardening; an account key ends in a hardened index (0'). ${hint}`);
  }
}

function checkPublicPoint(payload: Buffer, hint: string): void {
  const key = payload.subarray(45, 78);
  if (key[0] !== 0x02 && key[0] !== 0x03) {
    throw new XpubError(`The key data is not a compressed public key (it starts with 0x${key[0]!.toString(16).padStart(2, '0')}). ${hint}`);
  }
  if (!ecc.isPoint(key)) throw new XpubError(`The key data is not a point on the secp256k1 curve. ${hint}`);
}

/**
 * Accepts only a mainnet-versioned (`xpub`), depth-3, hardened-account public key with a valid
 * checksum and curve point. Surrounding whitespace (a copy-paste artefact) is trimmed.
 */
export function validateAccountXpub(input: string, kind: WalletKind): ValidXpub {
  const hint = `Export the account-level extended public key (xpub…) at ${accountPaths[kind]} from your wallet.`;
  const value = input.trim();
  const payload = decodeChecked(value, hint);
  checkVersion(payload, hint);
  checkAccountLevel(payload, kind, hint);
  checkPublicPoint(payload, hint);
  return { xpub: value, depth: 3 };
}
