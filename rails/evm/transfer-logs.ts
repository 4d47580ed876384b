import { numberToHex, parseAbiItem, type Address, type PublicClient } from 'viem';
import { decodeTransferLogs, transferTopic, type RawLog, type TransferLog } from './decode-transfers.js';

export type { TransferLog };

export const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** Errors by which providers say a range holds too many results or is too wide (halve and retry). */
const tooMuch = /too many|limit exceeded|response size|-32005|range|exceed max block range|413/i;

/**
 * `Transfer` logs of one token over a block range, one getLogs for all recipients (matching
 * happens in memory). The range halves when the provider refuses it as too large, down to a
 * single block; zero-value transfers (address-poisoning spam) and malformed logs are skipped.
 * The answer is decoded by `decodeTransferLogs` (the event's fixed layout), not a general ABI
 * decoder: a busy range of tens of thousands of logs then costs milliseconds of the event loop.
 */
export async function transferLogs(
  client: PublicClient,
  token: Address,
  fromBlock: bigint,
  toBlock: bigint,
  wanted?: (to: string) => boolean,
): Promise<TransferLog[]> {
  try {
    const logs = (await client.request({
      method: 'eth_getLogs',
      params: [{ address: token, topics: [transferTopic], fromBlock: numberToHex(fromBlock), toBlock: numberToHex(toBlock) }],
    })) as unknown;
    if (!Array.isArray(logs)) throw new Error('eth_getLogs answered something other than a list of logs');
    return decodeTransferLogs(logs as RawLog[], token, wanted).filter((log) => log.blockNumber >= fromBlock && log.blockNumber <= toBlock);
  } catch (err) {
    if (fromBlock < toBlock && tooMuch.test(String((err as Error).message))) {
      const mid = fromBlock + (toBlock - fromBlock) / 2n;
      return [...(await transferLogs(client, token, fromBlock, mid, wanted)), ...(await transferLogs(client, token, mid + 1n, toBlock, wanted))];
    }
    throw err;
  }
}
