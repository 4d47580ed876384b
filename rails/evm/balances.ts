import { createPublicClient, erc20Abi, http, numberToHex, pad, type Address, type PublicClient } from 'viem';
import { decodeTransferLog, decodeTransferLogs, transferTopic, type RawLog } from './decode-transfers.js';
import type { TransferLog } from './transfer-logs.js';
import { nextTurn } from '../chain/event-loop.js';

/**
 * The reads of the reconciler on an EVM-style chain (EVM rails, and TRON through its /jsonrpc):
 * many `balanceOf` at one height in few requests, one address's incoming transfers over a block
 * range, the first block of a time, and a receipt that vouches for a log.
 */

/** Multicall3's address on every public EVM network (mds1/multicall), BSC, Ethereum and Polygon included. */
export const multicall3Address: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';
/** Holders per `eth_call` to a deployed Multicall3: about 3 M gas of `balanceOf`, far below the 50 M call cap of common nodes. */
export const holdersPerCall = 500;
/**
 * Holders per deployless call: there the results come back as the code a constructor returns,
 * which nodes cap at 24,576 bytes (EIP-170), 160 bytes a `balanceOf` result in `aggregate3`'s
 * encoding: about 153 at most.
 */
export const holdersPerDeploylessCall = 140;

/** Whether each URL's chain has Multicall3 deployed, asked once per process. */
const multicallDeployed = new Map<string, Promise<boolean>>();

function hasMulticall3(url: string, client: PublicClient): Promise<boolean> {
  let known = multicallDeployed.get(url);
  if (!known) {
    known = client.getCode({ address: multicall3Address }).then((code) => code !== undefined && code !== '0x');
    multicallDeployed.set(url, known);
    known.catch(() => multicallDeployed.delete(url));
  }
  return known;
}

export function balanceClient(url: string, timeoutMs = 20_000): PublicClient {
  return createPublicClient({ transport: http(url, { timeout: timeoutMs, retryCount: 1 }) });
}

/**
 * `balanceOf` of every holder at one block, `holdersPerCall` per `eth_call` through Multicall3's
 * `aggregate3` (viem's multicall): the deployed contract where the chain has it, else viem's
 * deployless form (the same code sent with the call, as on a local chain; fewer holders a call). An entry is undefined
 * when its call failed; a request that failed fails its whole chunk that way. The event loop gets
 * a turn between chunks.
 */
export async function tokenBalancesAt(url: string, token: Address, holders: readonly Address[], blockNumber: bigint, timeoutMs?: number): Promise<Array<bigint | undefined>> {
  const client = balanceClient(url, timeoutMs);
  const deployed = await hasMulticall3(url, client);
  const perCall = deployed ? holdersPerCall : holdersPerDeploylessCall;
  const out: Array<bigint | undefined> = [];
  for (let at = 0; at < holders.length; at += perCall) {
    const chunk = holders.slice(at, at + perCall);
    const results = await client.multicall({
      contracts: chunk.map((holder) => ({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] }) as const),
      allowFailure: true,
      blockNumber,
      batchSize: 0,
      ...(deployed ? { multicallAddress: multicall3Address } : { deployless: true }),
    });
    for (const r of results) out.push(r.status === 'success' ? (r.result as bigint) : undefined);
    await nextTurn();
  }
  return out;
}

/** Errors by which providers say a range holds too many results or is too wide (halve and retry). */
const tooMuch = /too many|limit exceeded|response size|-32005|range|exceed max block range|413/i;

/**
 * Every `Transfer` of `token` to `to` in a block range, asked of the node with the recipient as a
 * topic (so a busy token costs nothing here): `maxRange` blocks a request, halved when the
 * provider refuses a range as too large. Malformed, zero-value and removed logs are skipped.
 */
export async function incomingTransfers(client: PublicClient, token: Address, to: Address, fromBlock: bigint, toBlock: bigint, maxRange = 5_000n): Promise<TransferLog[]> {
  const out: TransferLog[] = [];
  for (let start = fromBlock; start <= toBlock; start += maxRange) {
    const end = start + maxRange - 1n < toBlock ? start + maxRange - 1n : toBlock;
    out.push(...(await incomingRange(client, token, to, start, end)));
    await nextTurn();
  }
  return out;
}

async function incomingRange(client: PublicClient, token: Address, to: Address, fromBlock: bigint, toBlock: bigint): Promise<TransferLog[]> {
  try {
    const logs = (await client.request({
      method: 'eth_getLogs',
      params: [{ address: token, topics: [transferTopic, null, pad(to.toLowerCase() as Address)], fromBlock: numberToHex(fromBlock), toBlock: numberToHex(toBlock) }],
    })) as unknown;
    if (!Array.isArray(logs)) throw new Error('eth_getLogs answered something other than a list of logs');
    const recipient = to.toLowerCase();
    return decodeTransferLogs(logs as RawLog[], token).filter((l) => l.to === recipient && l.blockNumber >= fromBlock && l.blockNumber <= toBlock);
  } catch (err) {
    if (fromBlock < toBlock && tooMuch.test(String((err as Error).message))) {
      const mid = fromBlock + (toBlock - fromBlock) / 2n;
      return [...(await incomingRange(client, token, to, fromBlock, mid)), ...(await incomingRange(client, token, to, mid + 1n, toBlock))];
    }
    throw err;
  }
}

/**
 * The first block at or after `timestampSec` (or `head` when none is older), by halving: about 25
 * reads on a mainnet. A height the node has no block for (below a pruned node's history, or a
 * chain that does not start at 0) counts as older.
 */
export async function firstBlockAtOrAfter(client: PublicClient, timestampSec: bigint, head: bigint): Promise<bigint> {
  let lo = 0n;
  let hi = head;
  while (lo < hi) {
    const mid = lo + (hi - lo) / 2n;
    const block = (await client.request({ method: 'eth_getBlockByNumber', params: [numberToHex(mid), false] })) as { timestamp?: string } | null;
    if (!block?.timestamp || BigInt(block.timestamp) < timestampSec) lo = mid + 1n;
    else hi = mid;
  }
  return lo;
}

/**
 * Whether the node's receipt of the log's transaction holds that very log (same index, block,
 * token, sender, recipient and value): how a log one provider reports and another did not is
 * checked before it counts. False when the node has no such receipt or answers otherwise.
 */
export async function receiptVouches(client: PublicClient, token: Address, log: TransferLog): Promise<boolean> {
  const receipt = (await client.request({ method: 'eth_getTransactionReceipt', params: [log.txHash as `0x${string}`] })) as { logs?: RawLog[]; blockHash?: string } | null;
  if (!receipt || !Array.isArray(receipt.logs)) return false;
  const contract = token.toLowerCase();
  return receipt.logs.some((raw) => {
    const found = decodeTransferLog(raw, contract);
    return (
      found !== null && found.logIndex === log.logIndex && found.blockHash === log.blockHash && found.from === log.from &&
      found.to === log.to && found.value === log.value && found.txHash === log.txHash
    );
  });
}
