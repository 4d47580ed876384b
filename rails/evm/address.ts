import { getAddress, keccak256, toHex } from 'viem';

/** The 20-byte account of a 64-byte uncompressed secp256k1 public key (without the 0x04 prefix): the keccak tail. */
export function publicKeyHash(uncompressed64: Uint8Array): Uint8Array {
  return keccak256(uncompressed64, 'bytes').subarray(12);
}

/** EIP-55 checksummed `0x…` address, shared by BSC, Ethereum and Polygon. */
export function evmAddress(uncompressed64: Uint8Array): `0x${string}` {
  return getAddress(toHex(publicKeyHash(uncompressed64)));
}
