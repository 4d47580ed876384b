import { describe, expect, it } from '@jest/globals';
import { railIds } from '../../domain/rails.js';
import { availableRails, railRecord } from '../../rails/registry.js';

describe('rail records', () => {
  it('omits token fields for MOBILE_MONEY and has the spec token standards for USDT rails', () => {
    const mm = railRecord('MOBILE_MONEY', 'http://x');
    expect(mm).not.toHaveProperty('tokenStandard');
    expect(mm).not.toHaveProperty('tokenLogoUrl');
    expect(mm).not.toHaveProperty('estimatedFeeUsd');
    expect(mm.tokenSymbol).toBe('KES');
    const standards = Object.fromEntries(railIds.slice(1).map((id) => [id, railRecord(id, 'http://x').tokenStandard]));
    expect(standards).toEqual({ USDT_TRON: 'TRC20', USDT_BSC: 'BEP20', USDT_ETH: 'ERC20', USDT_POLYGON: 'Polygon PoS', USDT_SOL: 'SPL' });
    for (const id of railIds.slice(1)) {
      expect(railRecord(id, 'http://x').estimatedFeeUsd).toMatch(/^\d+\.\d+$/);
      expect(railRecord(id, 'http://x').tokenSymbol).toBe('USDT');
    }
  });

  it('applies the four availability rules', () => {
    const none = { mobileMoney: false, tronXpub: false, evmXpub: false, solanaWallet: false };
    expect(availableRails(none)).toEqual([]);
    expect(availableRails({ ...none, mobileMoney: true })).toEqual(['MOBILE_MONEY']);
    expect(availableRails({ ...none, tronXpub: true })).toEqual(['USDT_TRON']);
    expect(availableRails({ ...none, evmXpub: true })).toEqual(['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON']);
    expect(availableRails({ ...none, solanaWallet: true })).toEqual(['USDT_SOL']);
  });
});
