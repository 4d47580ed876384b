import { parseAbiItem, type Address, type PublicClient } from 'viem';

export const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export interface TransferLog {
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  /** 20-byte lowercase hex addresses; TRON adapters turn them into base58. */
  from: string;
  to: string;
  value: bigint;
}

/** Errors by which providers say a range holds too many results or is too wide (halve and retry). */
const tooMuch = /too many|limit exceeded|response size|-32005|range|exceed max block range|413/i;

/**
 * `Transfer` logs of one token over a block range, one getLogs for all recipients (matching
 * happens in memory). The range halves when the provider refuses it as too large, down to a
 * single block; zero-value transfers (address-poisoning spam) are skipped.
 */
export async function transferLogs(client: PublicClient, token: Address, fromBlock: bigint, toBlock: bigint): Promise<TransferLog[]> {
  try {
    const logs = await client.getLogs({ address: token, event: transferEvent, fromBlock, toBlock, strict: true });
    const out: TransferLog[] = [];
    for (const log of logs) {
      if (log.removed || log.args.value === 0n) continue;
      out.push({
        txHash: log.transactionHash,
        logIndex: log.logIndex,
        blockNumber: log.blockNumber,
        blockHash: log.blockHash,
        from: log.args.from.toLowerCase(),
        to: log.args.to.toLowerCase(),
        value: log.args.value,
      });
    }
    return out;
  } catch (err) {
    if (fromBlock < toBlock && tooMuch.test(String((err as Error).message))) {
      const mid = fromBlock + (toBlock - fromBlock) / 2n;
      return [...(await transferLogs(client, token, fromBlock, mid)), ...(await transferLogs(client, token, mid + 1n, toBlock))];
    }
    throw err;
  }
}
