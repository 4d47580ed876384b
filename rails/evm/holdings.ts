import { erc20Abi, isAddress, multicall3Abi, numberToHex, zeroAddress, type Address } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { inParallel } from '../chain/reads.js';
import { railEndpoint, type RailSettings } from '../settings.js';
import { usableRailRpcUrls } from './chain-ids.js';
import { balanceClient, holdersPerDeploylessCall, multicall3Address, tokenBalancesAt } from './balances.js';

/**
 * The treasury's read of an EVM chain (docs/treasury.md): the token and native-coin balance of
 * many holders at one block, in few requests. Where Multicall3 is deployed (every public EVM
 * network), one `eth_call` of `aggregate3` carries `holdersPerHoldingsCall` holders, two calls
 * each (`balanceOf` on the token, `getEthBalance` on Multicall3 itself). Where it is not (a bare
 * local chain), the token balances go through viem's deployless multicall (rails/evm/balances.ts)
 * and the native ones in JSON-RPC batches of `eth_getBalance`, `holdersPerRpcBatch` a request.
 * Never a request per address.
 */
export interface Holdings {
  /** Per holder, in order, in the token's smallest unit; undefined where its read failed. */
  token: Array<bigint | undefined>;
  /** Per holder, in order, in wei; undefined where its read failed. */
  native: Array<bigint | undefined>;
  blockNumber: bigint;
  /** The block's timestamp, in seconds since the epoch. */
  blockTimestamp: bigint;
  /** How many HTTP requests the read made (head included): what batching saves. */
  requests: number;
}

/** Holders per `aggregate3` call: 500 calls, about 3.5 M gas, far below common nodes' 50 M `eth_call` cap. */
export const holdersPerHoldingsCall = 250;
/** `eth_getBalance` calls per JSON-RPC batch request (providers commonly accept 500 to 1,000). */
export const holdersPerRpcBatch = 250;
/** Requests in flight at once to one node. */
export const holdingsConcurrency = 4;

/** Splits `items` into consecutive chunks of at most `size` (the last may be shorter). */
export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new Error(`chunk size must be a positive integer, not ${size}`);
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}

/** The `aggregate3` calls of one chunk: per holder, `balanceOf(holder)` on the token, then `getEthBalance(holder)` on Multicall3. */
export function holdingsCalls(token: Address, holders: readonly Address[]) {
  return holders.flatMap((holder) => [
    { address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] } as const,
    { address: multicall3Address, abi: multicall3Abi, functionName: 'getEthBalance', args: [holder] } as const,
  ]);
}

type BatchAnswer = { id?: unknown; result?: unknown; error?: unknown };

/** Native balances by JSON-RPC batches of `eth_getBalance` at one block; a failed entry or batch is undefined. */
async function nativeByBatch(url: string, holders: readonly Address[], blockNumber: bigint, timeoutMs: number): Promise<Array<bigint | undefined>> {
  const block = numberToHex(blockNumber);
  const parts = await inParallel(chunksOf(holders, holdersPerRpcBatch), holdingsConcurrency, async (chunk) => {
    const body = chunk.map((holder, id) => ({ jsonrpc: '2.0', id, method: 'eth_getBalance', params: [holder, block] }));
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
      const answers = (await res.json()) as unknown;
      if (!res.ok || !Array.isArray(answers)) return chunk.map(() => undefined);
      const byId = new Map<unknown, BatchAnswer>((answers as BatchAnswer[]).map((a) => [a?.id, a]));
      return chunk.map((_, id) => {
        const r = byId.get(id)?.result;
        return typeof r === 'string' && /^0x[0-9a-f]+$/i.test(r) ? BigInt(r) : undefined;
      });
    } catch {
      return chunk.map(() => undefined);
    }
  });
  return parts.flat();
}

/** Whether the chain has Multicall3 with code at its canonical address, asked once per URL and process. */
const deployedAt = new Map<string, Promise<boolean>>();

/**
 * Token and native balances of `holders` (20-byte hex) at the head block (or `blockNumber`).
 * Throws when the head cannot be read; single entries are undefined when their read failed.
 */
export async function readEvmHoldings(url: string, token: Address, holders: readonly Address[], opts: { blockNumber?: bigint; timeoutMs?: number } = {}): Promise<Holdings> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const client = balanceClient(url, timeoutMs);
  let requests = 0;
  const block = await client.getBlock(opts.blockNumber === undefined ? { blockTag: 'latest' } : { blockNumber: opts.blockNumber });
  requests++;
  let deployed = deployedAt.get(url);
  if (!deployed) {
    deployed = client.getCode({ address: multicall3Address }).then((code) => code !== undefined && code !== '0x');
    deployedAt.set(url, deployed);
    deployed.catch(() => deployedAt.delete(url));
    requests++;
  }
  const blockNumber = block.number;
  const lower = holders.map((h) => h.toLowerCase() as Address);
  if (await deployed) {
    const chunks = chunksOf(lower, holdersPerHoldingsCall);
    const parts = await inParallel(chunks, holdingsConcurrency, async (chunk) => {
      try {
        const results = await client.multicall({ contracts: holdingsCalls(token, chunk), allowFailure: true, blockNumber, batchSize: 0, multicallAddress: multicall3Address });
        return chunk.map((_, i) => {
          const t = results[2 * i]!;
          const n = results[2 * i + 1]!;
          return { token: t.status === 'success' ? (t.result as bigint) : undefined, native: n.status === 'success' ? (n.result as bigint) : undefined };
        });
      } catch {
        return chunk.map(() => ({ token: undefined, native: undefined }));
      }
    });
    requests += chunks.length;
    const flat = parts.flat();
    return { token: flat.map((p) => p.token), native: flat.map((p) => p.native), blockNumber, blockTimestamp: block.timestamp, requests };
  }
  const [tokenBalances, native] = await Promise.all([
    tokenBalancesAt(url, token, lower, blockNumber, timeoutMs).catch(() => lower.map(() => undefined)),
    nativeByBatch(url, lower, blockNumber, timeoutMs),
  ]);
  requests += Math.ceil(lower.length / holdersPerDeploylessCall) + Math.ceil(lower.length / holdersPerRpcBatch);
  return { token: tokenBalances, native, blockNumber, blockTimestamp: block.timestamp, requests };
}

/**
 * The EVM adapter's treasury read: the rail's token contract in the environment, from the first
 * usable provider (right chain id) that answers, in order. Null when the rail has no token contract.
 */
export function evmTreasuryRead(rails: RailSettings, rail: UsdtRail, environment: Environment, holders: readonly string[]): Promise<Holdings> | null {
  const contract = railEndpoint(rails, rail, environment).usdtContract;
  if (!contract) return null;
  const urls = usableRailRpcUrls(rails, rail, environment);
  return (async () => {
    let last: unknown = new Error('no usable RPC is configured');
    for (const url of urls) {
      try {
        // A person is waiting (the API, the dashboard): a node that does not answer in 10 s is passed over.
        const read = await readEvmHoldings(url, contract as Address, holders as Address[], { timeoutMs: 10_000 });
        // A provider that answered the head but no balance at all is asked no further: the next one is.
        if (holders.length === 0 || read.token.some((b) => b !== undefined)) return read;
        last = new Error('the provider answered no balance');
      } catch (err) {
        last = err;
      }
    }
    throw last;
  })();
}

/** An EVM sweep destination: 0x and 40 hex digits (a mixed-case one must carry a valid checksum), never the zero address; lowercased. */
export function parseEvmDestination(raw: string): string | null {
  const text = raw.trim();
  if (!/^0x[0-9a-fA-F]{40}$/.test(text) || !isAddress(text)) return null;
  const lower = text.toLowerCase();
  return lower === zeroAddress ? null : lower;
}
