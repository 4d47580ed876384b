import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from 'viem';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { inParallel } from '../chain/reads.js';
import { chunksOf } from '../evm/holdings.js';
import type { RailHoldings } from '../payment-method.js';
import { railEndpoint, railRpcUrls, type RailSettings } from '../settings.js';
import { tronAddressToEvmHex, isTronAddress } from './address.js';
import { triggerConstantContract, TronReadError, type TronReadOptions } from './client.js';

/**
 * The treasury's read of TRON (docs/treasury.md, "TRON"): the USDT and TRX balance of many
 * holders in few requests. TRON has Multicall3 (mds1/multicall's contract, the same bytecode as on
 * every EVM chain) deployed at an address of its own per network; one constant call of its
 * `aggregate3` through the node's HTTP API (`/wallet/triggerconstantcontract`) carries
 * `tronHoldersPerCall` holders, two calls each (`balanceOf` on the token, `getEthBalance` on
 * Multicall3 itself, which on TRON answers the TRX balance in sun), plus the block number and time
 * the chunk was read at. Never a request per address.
 *
 * Why not JSON-RPC batches: java-tron's `/jsonrpc` has no historical state (every `eth_call` is at
 * `latest`), and where a node accepts batch arrays it bounds them (`node.jsonrpc.maxBatchSize`) and
 * a provider meters each call in them; TronGrid documents no batch support. One `aggregate3` is one
 * call on any java-tron node.
 */
export const tronMulticall3: Readonly<Record<Environment, string>> = {
  // Mainnet: named Multicall3 on chain; SunSwap's SDK and DefiLlama read through it.
  live: 'TEazPvZwDjDtFeJupyo7QunvnrnUjPH8ED',
  // Nile testnet: as one public project's tests name it; not checked against Nile from here.
  test: 'TPX1jdAu3qdGCZCWX1m75RtB2wgtKotuDC',
};

/** Holders per `aggregate3` call: 400 balance reads, a few million energy of the constant call's 100 M cap. */
export const tronHoldersPerCall = 200;
/** Constant calls in flight at once to one node (TronGrid throttles keyless traffic). */
export const tronHoldingsConcurrency = 4;

export const tronMulticall3Abi = parseAbi([
  'struct Call3 { address target; bool allowFailure; bytes callData; }',
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3(Call3[] calls) payable returns (Result[] returnData)',
  'function getEthBalance(address addr) view returns (uint256 balance)',
  'function getBlockNumber() view returns (uint256 blockNumber)',
  'function getCurrentBlockTimestamp() view returns (uint256 timestamp)',
]);

const aggregate3Signature = 'aggregate3((address,bool,bytes)[])';
const evmHex = (address: string) => tronAddressToEvmHex(address);

/** Selectors of the per-holder calls, written out: viem's encoder per call costs more than the read itself at 10,000 holders. */
const balanceOfSelector = '0x70a08231';
const getEthBalanceSelector = '0x4d2301cc';

/** The `aggregate3` calls of one chunk: the block number and time, then per holder `balanceOf` on the token and `getEthBalance` on Multicall3. */
export function tronHoldingsCalls(multicall: string, token: string, holders: readonly string[]) {
  const self = evmHex(multicall);
  const tokenHex = evmHex(token);
  const call = (target: Hex, callData: Hex) => ({ target, allowFailure: true, callData });
  return [
    call(self, encodeFunctionData({ abi: tronMulticall3Abi, functionName: 'getBlockNumber' })),
    call(self, encodeFunctionData({ abi: tronMulticall3Abi, functionName: 'getCurrentBlockTimestamp' })),
    ...holders.flatMap((holder) => {
      const word = evmHex(holder).slice(2).padStart(64, '0');
      return [call(tokenHex, `${balanceOfSelector}${word}`), call(self, `${getEthBalanceSelector}${word}`)];
    }),
  ];
}

const word = (n: number) => n.toString(16).padStart(64, '0');

/**
 * `aggregate3(calls)`'s calldata, ABI-encoded by hand (the same bytes as viem's encoder, which a
 * unit test compares): an offset, the array's length, one offset per call, then each call as
 * (target, allowFailure, offset of its bytes, their length, the bytes padded to 32).
 */
export function encodeAggregate3(calls: ReadonlyArray<{ target: Hex; allowFailure: boolean; callData: Hex }>): Hex {
  const tuples = calls.map((c) => {
    const data = c.callData.slice(2);
    const padded = data.padEnd(Math.ceil(data.length / 64) * 64, '0');
    return `${c.target.slice(2).toLowerCase().padStart(64, '0')}${word(c.allowFailure ? 1 : 0)}${word(0x60)}${word(data.length / 2)}${padded}`;
  });
  const offsets: string[] = [];
  let at = calls.length * 32;
  for (const t of tuples) {
    offsets.push(word(at));
    at += t.length / 2;
  }
  return `0x82ad56cb${word(0x20)}${word(calls.length)}${offsets.join('')}${tuples.join('')}`;
}

interface Chunk {
  token: Array<bigint | undefined>;
  native: Array<bigint | undefined>;
  blockNumber: bigint | undefined;
  blockTimestamp: bigint | undefined;
}

const uint = (r: { success: boolean; returnData: Hex }): bigint | undefined => (r.success && r.returnData.length === 66 ? BigInt(r.returnData) : undefined);

async function readChunk(url: string, multicall: string, token: string, holders: readonly string[], opts: TronReadOptions): Promise<Chunk> {
  const data = encodeAggregate3(tronHoldingsCalls(multicall, token, holders));
  // function_selector and parameter (rather than `data`) are what every java-tron release accepts.
  const result = await triggerConstantContract(url, { ownerAddress: multicall, contractAddress: multicall, functionSelector: aggregate3Signature, parameter: data.slice(10) }, opts);
  const answers = decodeFunctionResult({ abi: tronMulticall3Abi, functionName: 'aggregate3', data: `0x${result}` });
  if (answers.length !== 2 + 2 * holders.length) throw new TronReadError(`aggregate3 answered ${answers.length} results, not ${2 + 2 * holders.length}`);
  return {
    blockNumber: uint(answers[0]!),
    blockTimestamp: uint(answers[1]!),
    token: holders.map((_, i) => uint(answers[2 + 2 * i]!)),
    native: holders.map((_, i) => uint(answers[3 + 2 * i]!)),
  };
}

/**
 * USDT and TRX balances (smallest units) of `holders` (base58) at the head, `tronHoldersPerCall`
 * a request. A chunk whose call failed leaves its holders undefined; throws when none answered.
 * TRON reads only the latest state, so chunks read moments apart may stand at neighbouring blocks:
 * the answer names the newest.
 */
export async function readTronHoldings(url: string, multicall: string, token: string, holders: readonly string[], opts: TronReadOptions = {}): Promise<RailHoldings> {
  const chunks = chunksOf(holders, tronHoldersPerCall);
  let lastError: unknown = null;
  const parts = await inParallel(chunks, tronHoldingsConcurrency, (chunk) =>
    readChunk(url, multicall, token, chunk, opts).catch((err: unknown): Chunk => {
      lastError = err;
      return { token: chunk.map(() => undefined), native: chunk.map(() => undefined), blockNumber: undefined, blockTimestamp: undefined };
    }),
  );
  const newest = parts.filter((p) => p.blockNumber !== undefined).sort((a, b) => (a.blockNumber! < b.blockNumber! ? 1 : -1))[0];
  if (!newest && holders.length > 0) throw lastError ?? new TronReadError('aggregate3 answered no block');
  return {
    token: parts.flatMap((p) => p.token),
    native: parts.flatMap((p) => p.native),
    blockNumber: newest?.blockNumber ?? 0n,
    blockTimestamp: newest?.blockTimestamp ?? 0n,
    requests: chunks.length,
  };
}

/** The TRON adapter's treasury read: the rail's token in the environment, from the first configured node that answers. Null without a token contract. */
export function tronTreasuryRead(rails: RailSettings, rail: UsdtRail, environment: Environment, holders: readonly string[]): Promise<RailHoldings> | null {
  const contract = railEndpoint(rails, rail, environment).usdtContract;
  if (!contract) return null;
  return (async () => {
    let last: unknown = new TronReadError('no TRON node is configured');
    for (const url of railRpcUrls(rails, rail, environment)) {
      try {
        // A person is waiting (the API, the dashboard): a node that does not answer in 10 s is passed over.
        return await readTronHoldings(url, tronMulticall3[environment], contract, holders, { timeoutMs: 10_000 });
      } catch (err) {
        last = err;
      }
    }
    throw last;
  })();
}

/** TRON's black-hole address (`41` and twenty zero bytes): what is sent there is gone. */
export const tronBlackHole = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';

/** A TRON sweep destination: base58check `T…` with a valid checksum, never the black-hole address; as typed (base58 is case-sensitive). */
export function parseTronDestination(raw: string): string | null {
  const text = raw.trim();
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(text) || !isTronAddress(text) || text === tronBlackHole) return null;
  return text;
}
