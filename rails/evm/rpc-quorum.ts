import type { PublicClient } from 'viem';
import { isUnreachable } from '../chain/outage.js';
import { describeFailure, type ProviderBook } from '../chain/providers.js';
import { retryRead } from '../chain/reads.js';
import { decodeTransferLogs, type RawLog } from './decode-transfers.js';
import { transferLogs, type TransferLog } from './transfer-logs.js';

/** One RPC of a rail: EVM chains directly, TRON through TronGrid's `/jsonrpc`. */
export interface EvmRpc {
  client: PublicClient;
  /**
   * TRON: the latest solidified block, from the node's solidity API. java-tron's JSON-RPC knows
   * only `latest` and `earliest` in many releases and providers, so `finalized` is not asked there.
   */
  solidifiedHead?: () => Promise<bigint>;
}

/** What the quorum needs of a chain view (rails/evm/scan-tick.ts). */
export interface QuorumSource {
  token: `0x${string}`;
  /** Explicit depth (CONFIRMATIONS_<RAIL>); otherwise the chain's finalized (TRON: solidified) block decides. */
  confirmations: number | undefined;
  /** In failover order, as configured. */
  rpcs: readonly EvmRpc[];
  /** Their health, by position (rails/chain/providers.ts). */
  book: ProviderBook;
}

/** A log the window counts; `missedByOne` when a provider that read the window left it out (it counted once verified). */
export type CountedLog = TransferLog & { missedByOne: boolean };

export interface WindowRead {
  logs: CountedLog[];
  /** The window was read from as many providers as a fact needs (two when two or more are configured). */
  complete: boolean;
  /** The lowest block of a log one provider reported and no other confirmed: the cursor stays below it. */
  heldBelow: bigint | undefined;
}

/** A provider this many blocks behind the highest head is lagging. */
export const lagBlocks = 16n;
/** Block-hash reads: tries per provider and height within one tick, and the first backoff. */
const hashRetry = { attempts: 3, backoffMs: 250 };
/** Hash reads stop starting this long into a tick, well inside the activity's 2-minute timeout. */
const hashReadBudgetMs = 60_000;

const logKey = (l: TransferLog) => `${l.txHash}:${l.logIndex}:${l.blockHash}:${l.blockNumber}:${l.from}:${l.to}:${l.value}`;

/**
 * What the providers of one rail agree on, for one tick. With one provider configured, what it
 * answers is the answer (the watcher's behaviour before there were lists). With two or more, a
 * fact needs two: heads and finalized heights are the lower of two; a block hash counts when two
 * providers read the same one; a window's logs are read from two, their union counts, and a log
 * only one reported counts once another provider's receipt holds it in the same block. Reads fail
 * over in order (healthy providers first); what cannot be settled waits for a later tick.
 */
export class RpcQuorum {
  /** Positions that answered their head this tick, in the order to ask them (laggards last). */
  private readonly asking: number[];
  private readonly heads: Map<number, bigint>;
  private readonly deadlineMs = Date.now() + hashReadBudgetMs;
  private readonly hashReads = new Map<string, Promise<string | undefined>>();
  private readonly agreed = new Map<bigint, Promise<string | undefined>>();
  /** Heights whose hash could not be settled this tick. */
  readonly unread = new Set<bigint>();
  readonly needed: number;
  head = 0n;
  finalized = -1n;

  private constructor(private readonly src: QuorumSource, private readonly nowMs: number, heads: Map<number, bigint>) {
    this.needed = Math.min(2, src.rpcs.length);
    this.heads = heads;
    const top = [...heads.values()].reduce((a, b) => (b > a ? b : a), 0n);
    const lagging = (p: number) => heads.get(p)! + lagBlocks < top;
    for (const p of heads.keys()) if (lagging(p)) src.book.report(p, 'lagging', `head ${heads.get(p)} is ${top - heads.get(p)!} blocks behind`, nowMs);
    const answered = src.book.order(nowMs).filter((p) => heads.has(p));
    this.asking = [...answered.filter((p) => !lagging(p)), ...answered.filter(lagging)];
    const pair = this.asking.slice(0, this.needed).map((p) => heads.get(p)!);
    this.head = pair.reduce((a, b) => (b < a ? b : a));
  }

  /**
   * Reads every provider's head (the sidelined only when the others cannot make a quorum). When
   * none answers, throws: an outage if every one was unreachable (outage.ts), else the failure.
   */
  static async open(src: QuorumSource, nowMs: number): Promise<RpcQuorum> {
    const needed = Math.min(2, src.rpcs.length);
    const order = src.book.order(nowMs);
    const heads = new Map<number, bigint>();
    const failures: [number, unknown][] = [];
    const ask = (positions: number[]) =>
      Promise.all(positions.map(async (p) => {
        try {
          heads.set(p, await src.rpcs[p]!.client.getBlockNumber({ cacheTime: 0 }));
          src.book.answered(p, nowMs);
        } catch (err) {
          failures.push([p, err]);
        }
      }));
    await ask(order.filter((p) => !src.book.isSidelined(p, nowMs)));
    for (const p of order.filter((q) => src.book.isSidelined(q, nowMs))) {
      if (heads.size >= needed) break;
      await ask([p]);
    }
    if (heads.size === 0) throw failures.find(([, e]) => !isUnreachable(e))?.[1] ?? failures[0]![1];
    for (const [p, err] of failures) src.book.report(p, 'erroring', describeFailure(err), nowMs);
    const q = new RpcQuorum(src, nowMs, heads);
    q.finalized = await q.readFinalized();
    return q;
  }

  /**
   * The first `needed` answers of `read`, asking the first providers at once and the next ones
   * in order in place of any that fails (reported as erroring).
   */
  private async collect<T>(needed: number, candidates: number[], read: (p: number) => Promise<T | undefined>): Promise<{ p: number; value: T }[]> {
    const out: { p: number; value: T }[] = [];
    const attempt = async (p: number) => {
      try {
        const value = await read(p);
        if (value !== undefined) {
          out.push({ p, value });
          return;
        }
      } catch (err) {
        this.src.book.report(p, 'erroring', describeFailure(err), this.nowMs);
      }
    };
    await Promise.all(candidates.slice(0, needed).map(attempt));
    for (const p of candidates.slice(needed)) {
      if (out.length >= needed) break;
      await attempt(p);
    }
    return out.slice(0, needed);
  }

  /** The lowest finalized height of the providers asked, never above the head; −1 when not enough answered. */
  private async readFinalized(): Promise<bigint> {
    const { confirmations, rpcs } = this.src;
    if (confirmations !== undefined) return this.head - BigInt(confirmations) + 1n;
    const answers = await this.collect(this.needed, this.asking, async (p) => {
      const rpc = rpcs[p]!;
      return rpc.solidifiedHead ? rpc.solidifiedHead() : (await rpc.client.getBlock({ blockTag: 'finalized' })).number ?? undefined;
    });
    if (answers.length < this.needed) return -1n;
    const lowest = answers.map((a) => a.value).reduce((a, b) => (b < a ? b : a));
    return lowest < this.head ? lowest : this.head;
  }

  /** One provider's hash of block `n`, read once per tick (with retries); undefined when it would not tell. */
  private hashOf(p: number, n: bigint): Promise<string | undefined> {
    const key = `${p}:${n}`;
    let read = this.hashReads.get(key);
    if (!read) {
      const client = this.src.rpcs[p]!.client;
      let failure: unknown;
      read = retryRead(async () => {
        try {
          const block = await client.getBlock({ blockNumber: n });
          failure = undefined;
          return block.number === n && block.hash ? block.hash : undefined;
        } catch (err) {
          failure = err;
          throw err;
        }
      }, { ...hashRetry, deadlineMs: this.deadlineMs }).then((hash) => {
        // No block there yet (a lagging node) is no error; a read that still failed is.
        if (hash === undefined && failure !== undefined) this.src.book.report(p, 'erroring', describeFailure(failure), this.nowMs);
        return hash;
      });
      this.hashReads.set(key, read);
    }
    return read;
  }

  /**
   * The hash of block `n` as `needed` providers agree on it now, or undefined: not enough of
   * them could be read, or they differ and no further provider settles it (then both are reported).
   */
  hashAt(n: bigint): Promise<string | undefined> {
    let read = this.agreed.get(n);
    if (!read) this.agreed.set(n, (read = this.settleHash(n)));
    return read;
  }

  private async settleHash(n: bigint): Promise<string | undefined> {
    const answers = await this.collect(this.needed, this.asking, (p) => this.hashOf(p, n));
    if (answers.length < this.needed) {
      this.unread.add(n);
      return undefined;
    }
    const [a, b] = answers;
    if (!b || a!.value === b.value) return a!.value;
    const rest = this.asking.filter((p) => p !== a!.p && p !== b.p);
    const [third] = await this.collect(1, rest, (p) => this.hashOf(p, n));
    const odd = third?.value === a!.value ? b : third?.value === b.value ? a : undefined;
    if (odd) {
      this.src.book.report(odd.p, 'disagreeing', `block ${n}: a hash two other providers do not see`, this.nowMs);
      return third!.value;
    }
    for (const x of [a!, b]) this.src.book.report(x.p, 'disagreeing', `block ${n}: the providers answer different hashes`, this.nowMs, false);
    this.unread.add(n);
    return undefined;
  }

  /**
   * The token's Transfer logs to watched recipients over `from..to`, read from `needed` providers
   * that have reached `to`. A log reported by fewer than `needed` counts only once verified on
   * another provider (verify); otherwise it is left out and holds the cursor below its block.
   */
  async logs(from: bigint, to: bigint, wanted: (hex40: string) => boolean): Promise<WindowRead> {
    const { token, rpcs } = this.src;
    const readers = await this.collect(this.needed, this.asking.filter((p) => this.heads.get(p)! >= to), (p) => transferLogs(rpcs[p]!.client, token, from, to, wanted));
    const union = new Map<string, { log: TransferLog; by: Set<number> }>();
    for (const { p, value } of readers) {
      for (const log of value) {
        const entry = union.get(logKey(log)) ?? { log, by: new Set<number>() };
        entry.by.add(p);
        union.set(logKey(log), entry);
      }
    }
    const out: CountedLog[] = [];
    let heldBelow: bigint | undefined;
    for (const { log, by } of union.values()) {
      const counted = by.size >= this.needed || (await this.verify(log, by, readers.map((r) => r.p)));
      if (counted) out.push({ ...log, missedByOne: by.size < readers.length });
      else if (heldBelow === undefined || log.blockNumber < heldBelow) heldBelow = log.blockNumber;
    }
    return { logs: out, complete: readers.length >= this.needed, heldBelow };
  }

  /**
   * Whether another provider than those that reported `log` holds it: that provider's block at
   * the log's height has the log's hash, and its receipt of the transaction carries the same log.
   * A provider that read the window and left out a log its own receipt shows is reported; so is
   * the reporter of a log another provider's same block does not hold.
   */
  private async verify(log: TransferLog, by: Set<number>, readers: number[]): Promise<boolean> {
    const others = [...readers, ...this.asking].filter((p, i, all) => !by.has(p) && all.indexOf(p) === i);
    for (const p of others) {
      const verdict = await this.receiptVerdict(p, log);
      if (verdict === 'unknown') continue;
      if (verdict === 'holds') {
        for (const r of readers) if (!by.has(r)) this.src.book.report(r, 'disagreeing', `left out a transfer in block ${log.blockNumber} its receipt shows`, this.nowMs);
        return true;
      }
      for (const r of by) this.src.book.report(r, 'disagreeing', `reported a transfer in block ${log.blockNumber} another provider's block does not hold`, this.nowMs);
      return false;
    }
    return false;
  }

  private async receiptVerdict(p: number, log: TransferLog): Promise<'holds' | 'refutes' | 'unknown'> {
    const hash = await this.hashOf(p, log.blockNumber);
    if (hash === undefined || hash !== log.blockHash) return 'unknown'; // another fork, or not there yet: no evidence
    let receipt: { logs?: unknown } | null;
    try {
      receipt = (await this.src.rpcs[p]!.client.request({ method: 'eth_getTransactionReceipt', params: [log.txHash as `0x${string}`] })) as { logs?: unknown } | null;
    } catch {
      return 'unknown';
    }
    if (receipt === null) return 'refutes';
    if (!Array.isArray(receipt.logs)) return 'unknown';
    const key = logKey(log);
    return decodeTransferLogs(receipt.logs as RawLog[], this.src.token).some((l) => logKey(l) === key) ? 'holds' : 'refutes';
  }
}
