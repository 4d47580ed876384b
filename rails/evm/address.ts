import { keccak256 } from 'viem';

/** The 20-byte account of a 64-byte uncompressed secp256k1 public key (without the 0x04 prefix): the keccak tail. */
export function publicKeyHash(uncompressed64: Uint8Array): Uint8Array {
  return keccak256(uncompressed64, 'bytes').subarray(12);
}

/** EIP-55 checksummed `0x…` address, shared by BSC, Ethereum and Polygon. */
export function evmAddress(uncompressed64: Uint8Array): `0x${string}` {
  return checksummedAddress(publicKeyHash(uncompressed64));
}

/**
 * EIP-55's mixed case of a 20-byte account: its lowercase hex with each letter upper-cased where
 * the keccak of that hex has a nibble of 8 or more. Written here, not viem's `getAddress`: that
 * one parses and validates the hex again and keeps two caches of 8,192 addresses that forget
 * their oldest by stepping over the holes of a `Map` (domain/bounded-cache.ts says why that
 * costs): 5 % of the serving CPU of a derive at a new index. The same answer
 * (test/unit/evm-address.test.ts).
 */
export function checksummedAddress(address20: Uint8Array): `0x${string}` {
  if (address20.length !== 20) throw new RangeError(`an EVM account is 20 bytes; got ${address20.length}`);
  const lower = Buffer.from(address20.buffer, address20.byteOffset, 20).toString('hex');
  const hash = keccak256(Buffer.from(lower, 'latin1'), 'bytes');
  let out = '0x';
  for (let i = 0; i < 40; i++) {
    const c = lower.charCodeAt(i);
    const nibble = i & 1 ? hash[i >> 1]! & 0x0f : hash[i >> 1]! >> 4;
    out += String.fromCharCode(c >= 0x61 && nibble >= 8 ? c - 0x20 : c);
  }
  return out as `0x${string}`;
}
