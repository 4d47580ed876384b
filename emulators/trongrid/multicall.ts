import { decodeFunctionData, encodeFunctionResult, erc20Abi, type Hex } from 'viem';
import { tronMulticall3Abi } from '../../rails/tron/holdings.js';

/**
 * Multicall3 (mds1/multicall) as a constant call sees it, for the contracts the emulator knows:
 * `aggregate3` of `getBlockNumber`, `getCurrentBlockTimestamp` and `getEthBalance` (TVM's BALANCE:
 * the TRX balance in sun) on Multicall3 itself and `balanceOf` on a TRC-20 token. A call to
 * anything else fails (`success: false`), as an unknown selector reverts on chain; with
 * `allowFailure: false` the whole call reverts, as Multicall3 does.
 */
export interface MulticallState {
  /** The Multicall3 contract's 20-byte hex (0x…, lowercase). */
  self: string;
  /** A token's balance of a holder (20-byte hex each), or undefined when `token` is no token. */
  tokenBalance(token: string, holder: string): bigint | undefined;
  trxBalance(holder: string): bigint;
  head: { number: number; timestampMs: number };
}

type Result = { success: boolean; returnData: Hex };

function one(state: MulticallState, target: string, callData: Hex): Result {
  const fail: Result = { success: false, returnData: '0x' };
  try {
    if (target.toLowerCase() === state.self) {
      const call = decodeFunctionData({ abi: tronMulticall3Abi, data: callData });
      const ok = (fn: 'getEthBalance' | 'getBlockNumber' | 'getCurrentBlockTimestamp', value: bigint): Result =>
        ({ success: true, returnData: encodeFunctionResult({ abi: tronMulticall3Abi, functionName: fn, result: value }) });
      if (call.functionName === 'getEthBalance') return ok('getEthBalance', state.trxBalance(call.args[0].toLowerCase()));
      if (call.functionName === 'getBlockNumber') return ok('getBlockNumber', BigInt(state.head.number));
      if (call.functionName === 'getCurrentBlockTimestamp') return ok('getCurrentBlockTimestamp', BigInt(Math.floor(state.head.timestampMs / 1000)));
      return fail;
    }
    const call = decodeFunctionData({ abi: erc20Abi, data: callData });
    if (call.functionName !== 'balanceOf') return fail;
    const amount = state.tokenBalance(target.toLowerCase(), call.args[0].toLowerCase());
    return amount === undefined ? fail : { success: true, returnData: encodeFunctionResult({ abi: erc20Abi, functionName: 'balanceOf', result: amount }) };
  } catch {
    return fail;
  }
}

/** The constant result of a call to Multicall3 (hex without 0x), or null when it reverts. */
export function answerMulticall(state: MulticallState, data: Buffer): string | null {
  let call;
  try {
    call = decodeFunctionData({ abi: tronMulticall3Abi, data: `0x${data.toString('hex')}` });
  } catch {
    return null;
  }
  if (call.functionName !== 'aggregate3') return null;
  const results: Result[] = [];
  for (const c of call.args[0]) {
    const r = one(state, c.target, c.callData);
    if (!r.success && !c.allowFailure) return null;
    results.push(r);
  }
  return encodeFunctionResult({ abi: tronMulticall3Abi, functionName: 'aggregate3', result: results }).slice(2);
}
