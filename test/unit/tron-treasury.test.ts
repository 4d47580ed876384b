import { describe, expect, it } from '@jest/globals';
import { decodeFunctionData, encodeFunctionData, erc20Abi } from 'viem';
import { tronAddressToEvmHex } from '../../rails/tron/address.js';
import { encodeAggregate3, parseTronDestination, tronBlackHole, tronHoldingsCalls, tronMulticall3, tronMulticall3Abi } from '../../rails/tron/holdings.js';

/** TRON's treasury rules (rails/tron/holdings.ts): which destinations a sweep may name, and what one aggregate3 call asks. */
describe('TRON treasury', () => {
  it('takes a base58check T… address with a valid checksum as a destination, as typed', () => {
    expect(parseTronDestination('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(parseTronDestination('  TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t ')).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  });

  it('refuses the black-hole address, a bad checksum, another case, hex and EVM forms', () => {
    for (const bad of [
      tronBlackHole,
      'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', // last character changed: checksum fails
      'tr7nhqjekqxgtci8q8zy4pl8otszgjlj6t',
      '41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
      '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c',
      'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6', // too short
      '',
    ]) expect({ bad, parsed: parseTronDestination(bad) }).toEqual({ bad, parsed: null });
  });

  it('asks the block first, then per holder balanceOf on the token and getEthBalance (TRX) on Multicall3, every call allowed to fail', () => {
    const token = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
    const holder = tronMulticall3.test;
    const calls = tronHoldingsCalls(tronMulticall3.live, token, [holder]);
    const self = tronAddressToEvmHex(tronMulticall3.live);
    expect(calls.map((c) => [c.target, c.allowFailure])).toEqual([[self, true], [self, true], [tronAddressToEvmHex(token), true], [self, true]]);
    expect(decodeFunctionData({ abi: tronMulticall3Abi, data: calls[0]!.callData }).functionName).toBe('getBlockNumber');
    expect(decodeFunctionData({ abi: tronMulticall3Abi, data: calls[1]!.callData }).functionName).toBe('getCurrentBlockTimestamp');
    const asked = (data: `0x${string}`, abi: typeof erc20Abi | typeof tronMulticall3Abi) => {
      const d = decodeFunctionData({ abi, data }) as { functionName: string; args: readonly string[] };
      return [d.functionName, d.args[0]!.toLowerCase()];
    };
    expect(asked(calls[2]!.callData, erc20Abi)).toEqual(['balanceOf', tronAddressToEvmHex(holder)]);
    expect(asked(calls[3]!.callData, tronMulticall3Abi)).toEqual(['getEthBalance', tronAddressToEvmHex(holder)]);
    // Multicall3's real selector: 0x82ad56cb is aggregate3 on every chain it is deployed on.
    expect(encodeFunctionData({ abi: tronMulticall3Abi, functionName: 'aggregate3', args: [[]] }).slice(0, 10)).toBe('0x82ad56cb');
  });

  it('encodes aggregate3 by hand to exactly the bytes of viem\'s ABI encoder', () => {
    const holders = ['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', tronMulticall3.live, tronMulticall3.test];
    for (const n of [0, 1, 3]) {
      const calls = tronHoldingsCalls(tronMulticall3.test, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', holders.slice(0, n));
      const mixed = calls.map((c, i) => ({ ...c, allowFailure: i % 3 !== 1, callData: i === 2 ? ('0x' as const) : c.callData }));
      for (const set of [calls, mixed]) expect(encodeAggregate3(set)).toBe(encodeFunctionData({ abi: tronMulticall3Abi, functionName: 'aggregate3', args: [set] }));
    }
  });
});
