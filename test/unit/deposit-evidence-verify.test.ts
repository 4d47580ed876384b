import { describe, expect, it } from '@jest/globals';
import type { DepositEvidenceRow } from '../../db/deposit-evidence-repo.js';
import { verifyRecordedDeposit } from '../../services/payment-links/deposit-evidence.js';

const row: DepositEvidenceRow = {
  tx_hash: '0xabc',
  log_index: 3,
  to_address: '0x00000000000000000000000000000000000000aa',
  from_address: '0x00000000000000000000000000000000000000bb',
  amount_minor: '1300000000000000000',
  decimals: 18,
  block_number: '42',
  state: 'confirmed',
  updated_at: '2026-11-28T09:00:00.000Z',
  tron_address: null,
  evm_address: '0x00000000000000000000000000000000000000AA',
  solana_address: null,
};

describe('a recorded deposit as evidence for a link', () => {
  it('becomes the report the workflow counts when it went to the link’s address in the rail’s units', () => {
    expect(verifyRecordedDeposit('USDT_BSC', row)).toEqual({
      deposit: {
        state: 'confirmed',
        report: { rail: 'USDT_BSC', key: '0xabc:3', externalId: '0xabc', payer: row.from_address, amountMinor: row.amount_minor, decimals: 18, blockNumber: 42, at: row.updated_at },
      },
    });
  });

  it('names the problem (and the key) when it went elsewhere or in other units, and is null on a prompted rail', () => {
    expect(verifyRecordedDeposit('USDT_BSC', { ...row, to_address: '0x00000000000000000000000000000000000000cc' })).toEqual({ key: '0xabc:3', problem: expect.stringMatching(/not to the link's USDT_BSC address/) });
    expect(verifyRecordedDeposit('USDT_BSC', { ...row, decimals: 6 })).toEqual({ key: '0xabc:3', problem: expect.stringMatching(/6 decimals/) });
    expect(verifyRecordedDeposit('USDT_TRON', { ...row, decimals: 6 })).toEqual({ key: '0xabc:3', problem: 'the link has no USDT_TRON address' });
    expect(verifyRecordedDeposit('MOBILE_MONEY', row)).toBeNull();
  });
});
