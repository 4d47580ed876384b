import { describe, expect, it } from '@jest/globals';
import { railEndpointProblems, railSettingsFrom } from '../../config/rail-settings.js';
import { simple7702Account } from '../../rails/evm/facts.js';

/**
 * SWEEP_DELEGATE_<RAIL>_<ENV> (docs/configuration.md, docs/treasury.md): the EIP-7702 delegate of
 * sponsored sweep plans, eth-infinitism's Simple7702Account by default on every EVM rail; an
 * address overrides it, `none` turns sponsored plans off; anything else, or a non-EVM rail, is a
 * problem at boot.
 */
describe('SWEEP_DELEGATE_<RAIL>_<ENV>', () => {
  it('defaults to the canonical Simple7702Account on the EVM rails, none elsewhere', () => {
    const rails = railSettingsFrom({});
    for (const rail of ['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON'] as const) {
      expect([rails[rail].endpoints.test.sweepDelegate, rails[rail].endpoints.live.sweepDelegate]).toEqual([simple7702Account, simple7702Account]);
    }
    expect(rails.USDT_TRON.endpoints.live.sweepDelegate).toBeUndefined();
  });

  it('takes an address, or none', () => {
    const rails = railSettingsFrom({ SWEEP_DELEGATE_USDT_BSC_TEST: '0x1111111111111111111111111111111111111111', SWEEP_DELEGATE_USDT_ETH_LIVE: 'none' });
    expect(rails.USDT_BSC.endpoints.test.sweepDelegate).toBe('0x1111111111111111111111111111111111111111');
    expect(rails.USDT_BSC.endpoints.live.sweepDelegate).toBe(simple7702Account);
    expect(rails.USDT_ETH.endpoints.live.sweepDelegate).toBeUndefined();
  });

  it('reports a malformed value and a rail without EIP-7702 at boot', () => {
    expect(railEndpointProblems({ SWEEP_DELEGATE_USDT_BSC_TEST: 'none', SWEEP_DELEGATE_USDT_ETH_LIVE: '0x1111111111111111111111111111111111111111' })).toEqual([]);
    expect(railEndpointProblems({ SWEEP_DELEGATE_USDT_BSC_TEST: 'yes', SWEEP_DELEGATE_USDT_TRON_LIVE: '0x1111111111111111111111111111111111111111' })).toEqual([
      'SWEEP_DELEGATE_USDT_BSC_TEST: must be an EVM address (0x and 40 hex digits), or none',
      'SWEEP_DELEGATE_USDT_TRON_LIVE: only the EVM rails (BSC, Ethereum, Polygon) take an EIP-7702 delegate',
    ]);
  });
});
