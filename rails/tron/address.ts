import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { publicKeyHash } from '../evm/address.js';

/** TRON base58check address of a 64-byte uncompressed public key: 0x41 ‖ keccak tail (the EVM account), with a double-SHA-256 checksum (`T…`). */
export function tronAddress(uncompressed64: Uint8Array): string {
  return tronAddressFromBytes(publicKeyHash(uncompressed64));
}

export function tronAddressFromBytes(address20: Uint8Array): string {
  const payload = Buffer.concat([Buffer.from([0x41]), Buffer.from(address20)]);
  const check = createHash('sha256').update(createHash('sha256').update(payload).digest()).digest().subarray(0, 4);
  return bs58.encode(Buffer.concat([payload, check]));
}

/** The 20-byte hex form (`0x…`) of a TRON address, as TRON's JSON-RPC and event logs show it. */
export function tronAddressToEvmHex(address: string): `0x${string}` {
  const raw = Buffer.from(bs58.decode(address));
  if (raw.length !== 25 || raw[0] !== 0x41) throw new Error(`not a TRON address: ${address}`);
  const check = createHash('sha256').update(createHash('sha256').update(raw.subarray(0, 21)).digest()).digest().subarray(0, 4);
  if (!check.equals(raw.subarray(21))) throw new Error(`bad TRON address checksum: ${address}`);
  return `0x${raw.subarray(1, 21).toString('hex')}`;
}

export function isTronAddress(value: string): boolean {
  try {
    tronAddressToEvmHex(value);
    return true;
  } catch {
    return false;
  }
}
