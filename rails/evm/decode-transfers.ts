/** One ERC-20 `Transfer` as the watchers and the reconciler read it. */
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

/**
 * `Transfer(address indexed from, address indexed to, uint256 value)` logs decoded straight from
 * an `eth_getLogs` answer, without a general ABI decoder: the event's layout is fixed, so the two
 * addresses are the last 20 bytes of topics 1 and 2 and the value is the 32-byte data word. A log
 * of any other shape (wrong signature, missing topics, data not one word, non-zero address
 * padding, a malformed field) is skipped, as viem's `strict` decoding skips it; so are removed
 * logs, zero-value transfers (address-poisoning spam) and logs of another contract. Pure: no I/O.
 */
export const transferTopic = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface RawLog {
  address?: unknown;
  topics?: unknown;
  data?: unknown;
  blockNumber?: unknown;
  blockHash?: unknown;
  transactionHash?: unknown;
  logIndex?: unknown;
  removed?: unknown;
}

const word = /^0x[0-9a-fA-F]{64}$/;
const paddedAddress = /^0x0{24}[0-9a-fA-F]{40}$/;
const quantity = /^0x[0-9a-fA-F]{1,64}$/;

export function decodeTransferLog(log: RawLog, token: string): TransferLog | null {
  if (log.removed === true) return null;
  // A provider that answers another contract's logs is not believed.
  if (typeof log.address !== 'string' || log.address.toLowerCase() !== token) return null;
  const topics = log.topics;
  if (!Array.isArray(topics) || topics.length !== 3) return null;
  const [sig, from, to] = topics as unknown[];
  if (typeof sig !== 'string' || sig.toLowerCase() !== transferTopic) return null;
  if (typeof from !== 'string' || typeof to !== 'string' || !paddedAddress.test(from) || !paddedAddress.test(to)) return null;
  const { data, blockNumber, blockHash, transactionHash, logIndex } = log;
  if (typeof data !== 'string' || !word.test(data)) return null;
  if (typeof blockNumber !== 'string' || !quantity.test(blockNumber) || typeof logIndex !== 'string' || !quantity.test(logIndex)) return null;
  if (typeof blockHash !== 'string' || !word.test(blockHash) || typeof transactionHash !== 'string' || !word.test(transactionHash)) return null;
  const value = BigInt(data);
  if (value === 0n) return null;
  return {
    txHash: transactionHash.toLowerCase(),
    logIndex: Number.parseInt(logIndex, 16),
    blockNumber: BigInt(blockNumber),
    blockHash: blockHash.toLowerCase(),
    from: `0x${from.slice(26).toLowerCase()}`,
    to: `0x${to.slice(26).toLowerCase()}`,
    value,
  };
}

/**
 * Every well-formed, non-zero, not-removed Transfer log of `token` in an answer, in its order.
 * With `wanted`, only logs to a recipient it accepts are decoded and checked. It is given the
 * recipient's 40 hex digits as the log carries them (any case, no `0x`): a watcher asks for its
 * watched addresses, so the other 99 % of a busy chain's logs cost one slice and one lookup each.
 */
export function decodeTransferLogs(logs: readonly RawLog[], token: string, wanted?: (to: string) => boolean): TransferLog[] {
  const out: TransferLog[] = [];
  const contract = token.toLowerCase();
  for (const log of logs) {
    if (wanted) {
      const to = Array.isArray(log.topics) ? (log.topics as unknown[])[2] : undefined;
      if (typeof to !== 'string' || to.length !== 66 || !wanted(to.slice(26))) continue;
    }
    const decoded = decodeTransferLog(log, contract);
    if (decoded) out.push(decoded);
  }
  return out;
}
