import { createRequire } from 'node:module';
import type { Hex } from 'viem';
import { multicall3Address } from '../../rails/evm/balances.js';
import type { Anvil } from './anvil.js';

/**
 * Multicall3's `aggregate3` (and `getEthBalance`: the subset of mds1/multicall the reconciler and the treasury call, same ABI) compiled
 * with solc-js and placed at its canonical address on anvil, as every public EVM network has it:
 * the reconciler's balance reads then take the deployed path (500 holders a call) rather than the
 * deployless one a bare local chain needs.
 */
const source = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract Multicall3 {
  struct Call3 { address target; bool allowFailure; bytes callData; }
  struct Result { bool success; bytes returnData; }
  function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
    returnData = new Result[](calls.length);
    for (uint256 i = 0; i < calls.length; i++) {
      (bool ok, bytes memory ret) = calls[i].target.call(calls[i].callData);
      require(ok || calls[i].allowFailure, "Multicall3: call failed");
      returnData[i] = Result(ok, ret);
    }
  }
  function getEthBalance(address addr) external view returns (uint256 balance) {
    balance = addr.balance;
  }
}`;

let runtime: Hex | undefined;

function compileMulticall3(): Hex {
  if (runtime) return runtime;
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: 'Solidity',
    sources: { 'Multicall3.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['evm.deployedBytecode.object'] } } },
  })));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`);
  runtime = `0x${out.contracts['Multicall3.sol'].Multicall3.evm.deployedBytecode.object}`;
  return runtime;
}

export async function deployMulticall3(anvil: Pick<Anvil, 'rpc'>): Promise<void> {
  await anvil.rpc('anvil_setCode', [multicall3Address, compileMulticall3()]);
}
