import { describe, expect, it } from '@jest/globals';
import { decodeFunctionData, erc20Abi, multicall3Abi, type Address } from 'viem';
import { multicall3Address } from '../../rails/evm/balances.js';
import { chunksOf, holdersPerHoldingsCall, holdersPerRpcBatch, holdingsCalls } from '../../rails/evm/holdings.js';
import { adapterOf } from '../../rails/adapters.js';
import { treasuryRails } from '../../services/treasury/balances.js';

/** The treasury's batching (rails/evm/holdings.ts): how many holders go in one request, and what one call asks. */
describe('treasury batching', () => {
  it('splits 10,000 holders into 40 aggregate3 calls of 250, in order, none lost', () => {
    const holders = Array.from({ length: 10_000 }, (_, i) => i);
    const chunks = chunksOf(holders, holdersPerHoldingsCall);
    expect(chunks).toHaveLength(40);
    expect(chunks.every((c) => c.length === 250)).toBe(true);
    expect(chunks.flat()).toEqual(holders);
    expect(chunksOf(holders.slice(0, 601), holdersPerRpcBatch).map((c) => c.length)).toEqual([250, 250, 101]);
    expect(chunksOf([], 250)).toEqual([]);
    expect(() => chunksOf([1], 0)).toThrow(/positive integer/);
  });

  it('asks, per holder, balanceOf on the token then getEthBalance on Multicall3', () => {
    const token = '0x55d398326f99059fF775485246999027B3197955' as Address;
    const holders = ['0x1111111111111111111111111111111111111111', '0x2222222222222222222222222222222222222222'] as Address[];
    const calls = holdingsCalls(token, holders);
    expect(calls.map((c) => [c.address, c.functionName, c.args[0]])).toEqual([
      [token, 'balanceOf', holders[0]],
      [multicall3Address, 'getEthBalance', holders[0]],
      [token, 'balanceOf', holders[1]],
      [multicall3Address, 'getEthBalance', holders[1]],
    ]);
    // The ABIs are the real ones: the selectors a node sees.
    expect(decodeFunctionData({ abi: erc20Abi, data: '0x70a082310000000000000000000000001111111111111111111111111111111111111111' }).functionName).toBe('balanceOf');
    expect(decodeFunctionData({ abi: multicall3Abi, data: '0x4d2301cc0000000000000000000000001111111111111111111111111111111111111111' }).functionName).toBe('getEthBalance');
  });

  it('lists a treasury for every USDT rail whose adapter declares one, and says why where there is nothing to read', () => {
    const rails = treasuryRails();
    expect(rails.length).toBeGreaterThan(0);
    for (const rail of rails) {
      const t = adapterOf(rail).treasury!;
      if (t.kind !== 'holdings') expect(t.reason.length).toBeGreaterThan(10);
    }
    expect(rails).not.toContain('MOBILE_MONEY');
  });
});
