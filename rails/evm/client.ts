import { BaseError, createPublicClient, erc20Abi, http, type Address, type PublicClient } from 'viem';

/**
 * Read access to an EVM chain (BSC, Ethereum, Polygon) over JSON-RPC, as plain functions of a
 * URL so the API and the chain-watcher activities share them. No Temporal dependency: retries
 * that must survive a crash belong to the activity that calls these.
 */
export interface EvmReadOptions {
  timeoutMs?: number;
  /** Retries inside one call (viem backs off exponentially); the API keeps this low. */
  retryCount?: number;
}

/** A failed read. The message never carries the RPC URL, which may embed a provider key. */
export class EvmReadError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EvmReadError';
  }
}

export function evmClient(rpcUrl: string, opts: EvmReadOptions = {}): PublicClient {
  return createPublicClient({
    transport: http(rpcUrl, { timeout: opts.timeoutMs ?? 10_000, retryCount: opts.retryCount ?? 1 }),
  });
}

function describe(err: unknown, rpcUrl: string): string {
  const text = err instanceof BaseError ? err.shortMessage : err instanceof Error ? err.message : String(err);
  return text.split(rpcUrl).join('<rpc>');
}

/**
 * `balanceOf(owner)` of an ERC-20 token in its smallest unit. A contract that answers nothing
 * (wrong address, wrong chain) is an error, never a zero balance.
 */
export async function readErc20Balance(rpcUrl: string, token: Address, owner: Address, opts: EvmReadOptions = {}): Promise<bigint> {
  try {
    return await evmClient(rpcUrl, opts).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
  } catch (err) {
    throw new EvmReadError(`balanceOf on ${token} failed: ${describe(err, rpcUrl)}`, { cause: err });
  }
}
