import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Abi, Hex } from 'viem';

/**
 * The local EVM chain shared by the tests and `npm run demo`: the anvil binary (from the npm
 * package `@foundry-rs/anvil-linux-amd64`, or `ANVIL_PATH`) and a USDT-like ERC-20 compiled
 * in-process with solc-js. Both are development dependencies: the demo and the tests need
 * `npm install` with dev dependencies (the default).
 */
const require = createRequire(import.meta.url);

export function anvilBinary(): string {
  if (process.env.ANVIL_PATH) return process.env.ANVIL_PATH;
  const bin = join(dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
  if (!existsSync(bin)) throw new Error(`anvil binary missing at ${bin}: run npm install, or set ANVIL_PATH`);
  return bin;
}

export const tokenSource = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
/// A USDT-like ERC-20 for tests: configurable decimals, open mint, standard events.
contract TestUSDT {
  string public name = "Tether USD";
  string public symbol = "USDT";
  uint8 public immutable decimals;
  uint256 public totalSupply;
  mapping(address => uint256) public balanceOf;
  mapping(address => mapping(address => uint256)) public allowance;
  event Transfer(address indexed from, address indexed to, uint256 value);
  event Approval(address indexed owner, address indexed spender, uint256 value);
  constructor(uint8 d) { decimals = d; }
  function mint(address to, uint256 v) external { totalSupply += v; balanceOf[to] += v; emit Transfer(address(0), to, v); }
  function transfer(address to, uint256 v) external returns (bool) { balanceOf[msg.sender] -= v; balanceOf[to] += v; emit Transfer(msg.sender, to, v); return true; }
  function approve(address s, uint256 v) external returns (bool) { allowance[msg.sender][s] = v; emit Approval(msg.sender, s, v); return true; }
  function transferFrom(address f, address to, uint256 v) external returns (bool) {
    allowance[f][msg.sender] -= v; balanceOf[f] -= v; balanceOf[to] += v; emit Transfer(f, to, v); return true;
  }
}`;

let compiled: { abi: Abi; bytecode: Hex } | undefined;

/** Compiles the test token once per process (solc-js, about a second). */
export function compileTestToken(): { abi: Abi; bytecode: Hex } {
  if (compiled) return compiled;
  const solc = require('solc') as { compile(input: string): string };
  const input = {
    language: 'Solidity',
    sources: { 'TestUSDT.sol': { content: tokenSource } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`);
  const contract = out.contracts['TestUSDT.sol'].TestUSDT;
  compiled = { abi: contract.abi as Abi, bytecode: `0x${contract.evm.bytecode.object}` };
  return compiled;
}

/** The ERC-20 calls the demo makes, without needing the compiler. */
export const erc20Abi = [
  { type: 'function', name: 'transfer', stateMutability: 'nonpayable', inputs: [{ name: 'to', type: 'address' }, { name: 'v', type: 'uint256' }], outputs: [{ type: 'bool' }] },
  { type: 'function', name: 'mint', stateMutability: 'nonpayable', inputs: [{ name: 'to', type: 'address' }, { name: 'v', type: 'uint256' }], outputs: [] },
  { type: 'function', name: 'balanceOf', stateMutability: 'view', inputs: [{ name: 'a', type: 'address' }], outputs: [{ type: 'uint256' }] },
] as const;
