import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { utils } from 'tronweb';
import { tronBandwidth, unsignedTronTx, type TronContract } from '../../rails/tron/transaction.js';

/**
 * Unsigned TRON transactions (rails/tron/transaction.ts) are the bytes TronWeb itself makes of
 * their JSON: TronWeb's offline signing recomputes txID from raw_data and refuses a mismatch.
 */
const owner = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const other = 'TEazPvZwDjDtFeJupyo7QunvnrnUjPH8ED';
const header = { refBlockNumber: 70_000_123n, refBlockId: `00000000042c1e7b${'ab'.repeat(24)}`, expirationMs: 1_764_400_000_000, timestampMs: 1_764_399_100_000 };
const cases: Array<[TronContract, bigint | undefined]> = [
  [{ type: 'TransferContract', owner, to: other, amountSun: 13_500_000n }, undefined],
  [{ type: 'TriggerSmartContract', owner, contract: other, data: `a9059cbb${'00'.repeat(12)}${'11'.repeat(20)}${(5_000_000).toString(16).padStart(64, '0')}` }, 30_000_000n],
  [{ type: 'DelegateResourceContract', owner, receiver: other, balanceSun: 1_000_000_000n, resource: 'ENERGY' }, undefined],
  [{ type: 'UnDelegateResourceContract', owner, receiver: other, balanceSun: 1_000_000_000n, resource: 'ENERGY' }, undefined],
];

describe('unsigned TRON transactions', () => {
  for (const [contract, feeLimitSun] of cases) {
    it(`${contract.type}: raw_data_hex is TronWeb's encoding of raw_data, and txID its SHA-256`, () => {
      const tx = unsignedTronTx({ ...header, feeLimitSun }, contract);
      const pb = utils.transaction.txJsonToPb(tx as never);
      expect(utils.transaction.txPbToRawDataHex(pb).toLowerCase()).toBe(tx.raw_data_hex);
      expect(tx.txID).toBe(createHash('sha256').update(Buffer.from(tx.raw_data_hex, 'hex')).digest('hex'));
      expect(utils.transaction.txCheck(tx as never)).toBe(true);
      expect(tx.raw_data).toMatchObject({ ref_block_bytes: '1e7b', ref_block_hash: 'ab'.repeat(8), expiration: header.expirationMs });
    });
  }

  it('counts the bandwidth of the signed transaction: raw, one signature and the result bytes', () => {
    const tx = unsignedTronTx({ ...header, feeLimitSun: 30_000_000n }, cases[1]![0]);
    const raw = tx.raw_data_hex.length / 2;
    expect(raw).toBeGreaterThan(127); // its length takes two bytes
    expect(tronBandwidth(tx.raw_data_hex)).toBe(BigInt(1 + 2 + raw + 67 + 64));
  });
});
