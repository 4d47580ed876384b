import { createHash } from 'node:crypto';
import { tronAddressToEvmHex } from './address.js';

/**
 * Unsigned TRON transactions, built here as java-tron's `/wallet/createtransaction`,
 * `/wallet/triggersmartcontract`, `/wallet/delegateresource` and `/wallet/undelegateresource`
 * answer them (`visible: true`): `raw_data` (JSON, addresses in base58), `raw_data_hex` (the
 * protobuf `Transaction.raw`, fields in number order, proto3 defaults left out) and `txID`, its
 * SHA-256, which is what a key signs. TronWeb's offline signing recomputes `txID` from `raw_data`
 * (`txCheck`) and refuses a transaction whose JSON and hex disagree; a unit test holds these to
 * TronWeb's own encoding.
 */
export type TronContract =
  | { type: 'TransferContract'; owner: string; to: string; amountSun: bigint }
  | { type: 'TriggerSmartContract'; owner: string; contract: string; data: string }
  | { type: 'DelegateResourceContract'; owner: string; receiver: string; balanceSun: bigint; resource: 'ENERGY' }
  | { type: 'UnDelegateResourceContract'; owner: string; receiver: string; balanceSun: bigint; resource: 'ENERGY' };

export interface TronTxHeader {
  /** The reference block: its number and id (64 hex digits, the number in its first 8 bytes). */
  refBlockNumber: bigint;
  refBlockId: string;
  expirationMs: number;
  timestampMs: number;
  /** TriggerSmartContract only: the most TRX (sun) the call may burn for energy. */
  feeLimitSun?: bigint;
}

export interface UnsignedTronTx {
  visible: true;
  txID: string;
  raw_data: Record<string, unknown>;
  raw_data_hex: string;
}

const contractTypeNumber = { TransferContract: 1, TriggerSmartContract: 31, DelegateResourceContract: 57, UnDelegateResourceContract: 58 } as const;

export function varint(value: number | bigint): Buffer {
  let v = BigInt(value);
  if (v < 0n) throw new Error('negative varint');
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number((v & 0x7fn) | 0x80n));
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

export const bytesField = (field: number, value: Buffer): Buffer => Buffer.concat([varint((field << 3) | 2), varint(value.length), value]);
/** A varint field; proto3 leaves a zero out. */
export const varintField = (field: number, value: number | bigint): Buffer => (BigInt(value) === 0n ? Buffer.alloc(0) : Buffer.concat([varint(field << 3), varint(value)]));

/** The 21-byte form (`41` ‖ 20 bytes) of a base58 address. */
export const address21 = (address: string): Buffer => Buffer.from(`41${tronAddressToEvmHex(address).slice(2)}`, 'hex');

function contractValue(c: TronContract): Buffer {
  switch (c.type) {
    case 'TransferContract':
      return Buffer.concat([bytesField(1, address21(c.owner)), bytesField(2, address21(c.to)), varintField(3, c.amountSun)]);
    case 'TriggerSmartContract':
      return Buffer.concat([bytesField(1, address21(c.owner)), bytesField(2, address21(c.contract)), bytesField(4, Buffer.from(c.data, 'hex'))]);
    case 'DelegateResourceContract':
    case 'UnDelegateResourceContract':
      return Buffer.concat([bytesField(1, address21(c.owner)), varintField(2, 1), varintField(3, c.balanceSun), bytesField(4, address21(c.receiver))]);
  }
}

function valueJson(c: TronContract): Record<string, unknown> {
  switch (c.type) {
    case 'TransferContract':
      return { owner_address: c.owner, to_address: c.to, amount: Number(c.amountSun) };
    case 'TriggerSmartContract':
      return { owner_address: c.owner, contract_address: c.contract, data: c.data };
    case 'DelegateResourceContract':
    case 'UnDelegateResourceContract':
      return { owner_address: c.owner, receiver_address: c.receiver, balance: Number(c.balanceSun), resource: c.resource };
  }
}

export function encodeTronRaw(h: TronTxHeader, c: TronContract): Buffer {
  const typeUrl = `type.googleapis.com/protocol.${c.type}`;
  const any = Buffer.concat([bytesField(1, Buffer.from(typeUrl)), bytesField(2, contractValue(c))]);
  const contract = Buffer.concat([varintField(1, contractTypeNumber[c.type]), bytesField(2, any)]);
  const id = Buffer.from(h.refBlockId, 'hex');
  return Buffer.concat([
    bytesField(1, id.subarray(6, 8)),
    bytesField(4, id.subarray(8, 16)),
    varintField(8, h.expirationMs),
    bytesField(11, contract),
    varintField(14, h.timestampMs),
    varintField(18, h.feeLimitSun ?? 0n),
  ]);
}

/** An unsigned transaction as the node's create endpoints answer it (`visible: true`). */
export function unsignedTronTx(h: TronTxHeader, c: TronContract): UnsignedTronTx {
  const raw = encodeTronRaw(h, c);
  const id = Buffer.from(h.refBlockId, 'hex');
  const rawData: Record<string, unknown> = {
    contract: [{ parameter: { value: valueJson(c), type_url: `type.googleapis.com/protocol.${c.type}` }, type: c.type }],
    ref_block_bytes: id.subarray(6, 8).toString('hex'),
    ref_block_hash: id.subarray(8, 16).toString('hex'),
    expiration: h.expirationMs,
    timestamp: h.timestampMs,
  };
  if (h.feeLimitSun !== undefined) rawData.fee_limit = Number(h.feeLimitSun);
  return { visible: true, txID: createHash('sha256').update(raw).digest('hex'), raw_data: rawData, raw_data_hex: raw.toString('hex') };
}

/**
 * The bandwidth a transaction signed once consumes: its serialized size (raw, one 65-byte
 * signature) plus the 64 bytes java-tron counts for the result of each contract
 * (`MAX_RESULT_SIZE_IN_TX`).
 */
export function tronBandwidth(rawHex: string): bigint {
  const raw = rawHex.length / 2;
  return BigInt(1 + varint(raw).length + raw + (1 + 1 + 65) + 64);
}
