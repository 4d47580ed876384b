import { createHash } from 'node:crypto';
import { tronAddressToEvmHex } from '../../rails/tron/address.js';

/**
 * TronGrid's Ethereum-compatible JSON-RPC (`POST /jsonrpc`, java-tron's `/jsonrpc` service) over
 * an in-memory chain of TRC-20 transfers. What it mirrors from TRON's documentation
 * (tronprotocol/documentation-en, api/json-rpc): addresses are 20-byte hex without the `41`
 * prefix; `finalized` is the latest solidified block (about 19 blocks behind the head) in the
 * releases that know the tag, an invalid block number in those that do not (`finalizedTag`);
 * `pending` and `safe` are refused with -32602; eth_getLogs refuses ranges over 5,000 blocks
 * (-32602 "exceed max block range"); logs carry `blockTimestamp` and `removed`;
 * eth_getTransactionReceipt answers the transfer's receipt with its logs, or null. The same
 * solidified block is served by the HTTP solidity API (`/walletsolidity/getnowblock`).
 */
const transferTopic = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const tronBlockMs = 3_000;
export const solidifyLag = 19;
const maxBlockRange = 5_000;

interface Log {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
  logIndex: number;
  transactionIndex: number;
}

interface Block {
  number: number;
  hash: string;
  parentHash: string;
  timestampMs: number;
  logs: Log[];
  /** Transactions broadcast to the emulator that this block took, with their TransactionInfo fields. */
  txs: IncludedTx[];
}

/** A TRC-20 transfer a transaction made (a `Transfer` log). */
export interface TokenTransfer { contract: string; from: string; to: string; amount: bigint }

/** A transaction broadcast to the emulator (broadcast.ts): applied to the state when a block takes it. */
export interface PendingTronTx {
  id: string;
  /** Applies it; answers its TransactionInfo fields (fee, receipt, result) and the TRC-20 transfers it made. */
  execute(): { info: Record<string, unknown>; transfers: TokenTransfer[] };
}

interface IncludedTx { id: string; info: Record<string, unknown>; transfers: TokenTransfer[] }

const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const pad32 = (hex20: string) => `0x${hex20.replace(/^0x/, '').padStart(64, '0')}`;
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export class RpcFault extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

export class TronChain {
  private blocks: Block[] = [];
  private fork = 0;
  /** Broadcast transactions no block took yet; and those a reorganisation took out, taken again as they were. */
  private pool: PendingTronTx[] = [];
  private requeued: IncludedTx[] = [];
  /** Whether `finalized` is a known tag (java-tron 4.7.x docs); false answers as releases without it do. */
  finalizedTag = true;

  constructor(startNumber = 70_000_000) {
    this.blocks.push(this.makeBlock(startNumber, '0x' + '0'.repeat(64), [], []));
  }

  private makeBlock(number: number, parentHash: string, logs: Log[], txs: IncludedTx[]): Block {
    // TRON block ids start with the block number (8 bytes) followed by a hash tail.
    const tail = sha(`${number}:${parentHash}:${this.fork}:${logs.map((l) => l.transactionHash).join()}:${txs.map((t) => t.id).join()}`).slice(16);
    return { number, hash: `0x${number.toString(16).padStart(16, '0')}${tail}`, parentHash, timestampMs: Date.now(), logs, txs };
  }

  /** Takes a broadcast transaction into the pool: the next mined block applies it. */
  submit(tx: PendingTronTx): void {
    this.pool.push(tx);
  }

  /** Whether a transaction id is in the pool or in a block (java-tron's DUP_TRANSACTION_ERROR). */
  knows(id: string): boolean {
    return this.pool.some((t) => t.id === id) || this.requeued.some((t) => t.id === id) || this.blocks.some((b) => b.txs.some((t) => t.id === id));
  }

  /** Broadcast transactions no block took yet. */
  get pending(): number {
    return this.pool.length + this.requeued.length;
  }

  /** Whether a block of the chain has this reference (`ref_block_bytes`: the number's last 2 bytes; `ref_block_hash`: id bytes 8..16). */
  hasReferenceBlock(refBlockBytes: string, refBlockHash: string): boolean {
    return this.blocks.some((b) => (b.number & 0xffff).toString(16).padStart(4, '0') === refBlockBytes && b.hash.slice(2 + 16, 2 + 32) === refBlockHash);
  }

  /**
   * `/wallet/gettransactioninfobyid`: a broadcast transaction's TransactionInfo once a block took
   * it (`{}` before); `/walletsolidity/…` (`solidified`) only once that block is solidified.
   */
  txInfoJson(id: string, solidified = false): Record<string, unknown> {
    const block = this.blocks.find((b) => b.txs.some((t) => t.id === id));
    if (!block || (solidified && block.number > this.solidified.number)) return {};
    const tx = block.txs.find((t) => t.id === id)!;
    const log = tx.transfers.map((t) => ({
      address: tronAddressToEvmHex(t.contract).slice(2),
      topics: [transferTopic.slice(2), pad32(tronAddressToEvmHex(t.from)).slice(2), pad32(tronAddressToEvmHex(t.to)).slice(2)],
      data: pad32(t.amount.toString(16)).slice(2),
    }));
    return { id, blockNumber: block.number, blockTimeStamp: block.timestampMs, ...tx.info, ...(log.length > 0 ? { log } : {}) };
  }

  get head(): Block {
    return this.blocks[this.blocks.length - 1]!;
  }

  get solidified(): Block {
    return this.blocks[Math.max(0, this.blocks.length - 1 - solidifyLag)]!;
  }

  /**
   * Mines `n` blocks; the first holds the given transfers and takes every broadcast transaction
   * waiting (applied now, in the order they came). Returns the given transfers' transaction ids.
   */
  mine(n = 1, transfers: TokenTransfer[] = []): string[] {
    return this.append(n, transfers, true);
  }

  private append(n: number, transfers: TokenTransfer[], takePool: boolean): string[] {
    const ids: string[] = [];
    const logOf = (t: TokenTransfer, txid: string, index: number): Log => ({
      address: tronAddressToEvmHex(t.contract),
      topics: [transferTopic, pad32(tronAddressToEvmHex(t.from)), pad32(tronAddressToEvmHex(t.to))],
      data: pad32(t.amount.toString(16)),
      transactionHash: `0x${txid}`,
      logIndex: index,
      transactionIndex: index,
    });
    for (let i = 0; i < n; i++) {
      const logs = (i === 0 ? transfers : []).map((t, index) => {
        const txid = sha(`tx:${this.head.number + 1}:${this.fork}:${index}:${t.to}:${t.amount}`);
        ids.push(txid);
        return logOf(t, txid, index);
      });
      const txs: IncludedTx[] = [];
      if (i === 0 && takePool) {
        txs.push(...this.requeued.splice(0));
        for (const p of this.pool.splice(0)) txs.push({ id: p.id, ...p.execute() });
        for (const t of txs) for (const tr of t.transfers) logs.push(logOf(tr, t.id, logs.length));
      }
      this.blocks.push(this.makeBlock(this.head.number + 1, this.head.hash, logs, txs));
    }
    return ids;
  }

  /**
   * Replaces the last `depth` blocks with empty ones (a fork the network switched away from). The
   * broadcast transactions they held go back to wait for the next mined block, which takes them
   * again as they were (their effects on the emulator's state stand: it keeps no state per block).
   */
  reorg(depth: number): void {
    this.fork += 1;
    const keep = this.blocks.length - depth;
    const count = this.blocks.length - keep;
    this.requeued.push(...this.blocks.slice(keep).flatMap((b) => b.txs));
    this.blocks = this.blocks.slice(0, keep);
    this.append(count, [], false);
  }

  private byTag(tag: unknown): Block | null {
    if (tag === 'latest') return this.head;
    if (tag === 'finalized' && this.finalizedTag) return this.solidified;
    if (tag === 'earliest') return this.blocks[0]!;
    if (tag === 'pending' || tag === 'safe') throw new RpcFault(-32602, `TAG ${tag} not supported`);
    if (typeof tag !== 'string' || !/^0x[0-9a-f]+$/i.test(tag)) throw new RpcFault(-32602, 'invalid block number');
    const n = Number(BigInt(tag));
    return this.blocks.find((b) => b.number === n) ?? null;
  }

  private blockJson(b: Block) {
    return {
      baseFeePerGas: '0x0', difficulty: '0x0', extraData: '0x', gasLimit: '0x0', gasUsed: '0x0', hash: b.hash,
      logsBloom: `0x${'0'.repeat(512)}`, miner: '0x' + sha(`w${b.number}`).slice(0, 40), mixHash: `0x${'0'.repeat(64)}`,
      nonce: '0x0000000000000000', number: hex(b.number), parentHash: b.parentHash, receiptsRoot: `0x${'0'.repeat(64)}`,
      sha3Uncles: `0x${'0'.repeat(64)}`, size: hex(200 + b.logs.length * 300), stateRoot: '0x', timestamp: hex(Math.floor(b.timestampMs / 1000)),
      totalDifficulty: '0x0', transactions: b.logs.map((l) => l.transactionHash), transactionsRoot: `0x${sha(b.hash)}`, uncles: [],
    };
  }

  private getLogs(filter: { fromBlock?: string; toBlock?: string; address?: string | string[]; topics?: (string | string[] | null)[] }) {
    const from = this.byTag(filter.fromBlock ?? 'latest')?.number ?? Number(BigInt(filter.fromBlock!));
    const to = this.byTag(filter.toBlock ?? 'latest')?.number ?? Number(BigInt(filter.toBlock!));
    if (to - from > maxBlockRange) throw new RpcFault(-32602, 'exceed max block range: 5000');
    const addresses = filter.address === undefined ? null : (Array.isArray(filter.address) ? filter.address : [filter.address]).map((a) => a.toLowerCase());
    const matches = (value: string, want: string | string[] | null | undefined) =>
      want === null || want === undefined || (Array.isArray(want) ? want.map((w) => w.toLowerCase()).includes(value) : want.toLowerCase() === value);
    const out = [];
    for (const b of this.blocks) {
      if (b.number < from || b.number > to) continue;
      for (const l of b.logs) {
        if (addresses && !addresses.includes(l.address)) continue;
        if (!(filter.topics ?? []).every((t, i) => matches(l.topics[i] ?? '', t))) continue;
        out.push({
          ...l, logIndex: hex(l.logIndex), transactionIndex: hex(l.transactionIndex), blockHash: b.hash, blockNumber: hex(b.number),
          blockTimestamp: hex(Math.floor(b.timestampMs / 1000)), removed: false,
        });
      }
    }
    return out;
  }

  /** eth_getTransactionReceipt: the transfer's block and its logs (TRON JSON-RPC's TransactionReceipt), or null. */
  private receipt(txHash: unknown) {
    if (typeof txHash !== 'string' || !/^0x[0-9a-f]{64}$/i.test(txHash)) throw new RpcFault(-32602, 'invalid hash value');
    const id = txHash.toLowerCase();
    const block = this.blocks.find((b) => b.logs.some((l) => l.transactionHash === id));
    if (!block) return null;
    const logs = block.logs.filter((l) => l.transactionHash === id);
    const first = logs[0]!;
    return {
      blockHash: block.hash, blockNumber: hex(block.number), contractAddress: null, cumulativeGasUsed: '0x3a5b', effectiveGasPrice: '0xd2',
      from: `0x${first.topics[1]!.slice(26)}`, gasUsed: '0x3a5b', logsBloom: `0x${'0'.repeat(512)}`, root: null, status: '0x1', to: first.address,
      transactionHash: id, transactionIndex: hex(first.transactionIndex), type: '0x0',
      logs: logs.map((l) => ({
        ...l, blockHash: block.hash, blockNumber: hex(block.number), logIndex: hex(l.logIndex), transactionIndex: hex(l.transactionIndex), removed: false,
      })),
    };
  }

  /**
   * The latest solidified block as `/walletsolidity/getnowblock` answers it (protocol.Block over
   * HTTP: `blockID` without 0x, the header's raw_data with a decimal number and a millisecond
   * timestamp). Its transactions are left out: nothing here reads them.
   */
  solidifiedBlockJson() {
    return this.httpBlockJson(this.solidified);
  }

  /** The head block as `/wallet/getnowblock` answers it (the same shape). */
  headBlockJson() {
    return this.httpBlockJson(this.head);
  }

  private httpBlockJson(b: Block) {
    return {
      blockID: b.hash.slice(2),
      block_header: {
        raw_data: {
          number: b.number, txTrieRoot: sha(`txs:${b.hash}`), witness_address: `41${sha(`w${b.number}`).slice(0, 40)}`,
          parentHash: b.parentHash.slice(2), version: 32, timestamp: b.timestampMs,
        },
        witness_signature: `${sha(`sig:${b.hash}`)}${sha(`sig2:${b.hash}`)}00`,
      },
    };
  }

  call(method: string, params: unknown[]): unknown {
    switch (method) {
      case 'eth_blockNumber':
        return hex(this.head.number);
      case 'eth_chainId':
        return '0x2b6653dc'; // TRON mainnet's JSON-RPC chain id
      case 'eth_getBlockByNumber': {
        const b = this.byTag(params[0]);
        return b ? this.blockJson(b) : null;
      }
      case 'eth_getBlockByHash': {
        const b = this.blocks.find((x) => x.hash === params[0]);
        return b ? this.blockJson(b) : null;
      }
      case 'eth_getLogs':
        return this.getLogs((params[0] ?? {}) as never);
      case 'eth_getTransactionReceipt':
        return this.receipt(params[0]);
      default:
        throw new RpcFault(-32601, `the method ${method} does not exist/is not available`);
    }
  }
}

/** One JSON-RPC 2.0 exchange (single or batch), as java-tron answers it. */
export function answerJsonRpc(chain: TronChain, body: unknown): unknown {
  const one = (req: { id?: unknown; method?: unknown; params?: unknown }) => {
    try {
      if (typeof req.method !== 'string') throw new RpcFault(-32600, 'Invalid Request');
      return { jsonrpc: '2.0', id: req.id ?? null, result: chain.call(req.method, Array.isArray(req.params) ? req.params : []) };
    } catch (err) {
      const code = err instanceof RpcFault ? err.code : -32603;
      return { jsonrpc: '2.0', id: req.id ?? null, error: { code, message: (err as Error).message, data: '{}' } };
    }
  };
  return Array.isArray(body) ? body.map(one) : one(body as never);
}
