import { createHash } from 'node:crypto';
import { bytesField, varintField } from '../../rails/tron/transaction.js';

/**
 * The unsigned `TriggerSmartContract` transaction java-tron puts beside a constant call's result,
 * encoded exactly as the node does: `raw_data_hex` is the protobuf `Transaction.raw` and `txID`
 * is its SHA-256. Only the fields a constant call fills are written, in field-number order.
 */
export interface TriggerRaw {
  refBlockBytes: Buffer;
  refBlockHash: Buffer;
  expiration: number;
  timestamp: number;
  ownerAddress: Buffer;
  contractAddress: Buffer;
  data: Buffer;
}

const triggerTypeUrl = 'type.googleapis.com/protocol.TriggerSmartContract';
const triggerSmartContractType = 31;

export function encodeTriggerRaw(t: TriggerRaw): Buffer {
  const trigger = Buffer.concat([bytesField(1, t.ownerAddress), bytesField(2, t.contractAddress), bytesField(4, t.data)]);
  const any = Buffer.concat([bytesField(1, Buffer.from(triggerTypeUrl)), bytesField(2, trigger)]);
  const contract = Buffer.concat([varintField(1, triggerSmartContractType), bytesField(2, any)]);
  return Buffer.concat([
    bytesField(1, t.refBlockBytes),
    bytesField(4, t.refBlockHash),
    varintField(8, t.expiration),
    bytesField(11, contract),
    varintField(14, t.timestamp),
  ]);
}

/** The `transaction` object of the JSON answer; addresses in base58 when `visible`, else hex. */
export function triggerTransactionJson(t: TriggerRaw, visible: boolean, showAddress: (hex41: Buffer) => string): Record<string, unknown> {
  const raw = encodeTriggerRaw(t);
  return {
    ret: [{}],
    visible,
    txID: createHash('sha256').update(raw).digest('hex'),
    raw_data: {
      contract: [
        {
          parameter: {
            value: { data: t.data.toString('hex'), owner_address: showAddress(t.ownerAddress), contract_address: showAddress(t.contractAddress) },
            type_url: triggerTypeUrl,
          },
          type: 'TriggerSmartContract',
        },
      ],
      ref_block_bytes: t.refBlockBytes.toString('hex'),
      ref_block_hash: t.refBlockHash.toString('hex'),
      expiration: t.expiration,
      timestamp: t.timestamp,
    },
    raw_data_hex: raw.toString('hex'),
  };
}
