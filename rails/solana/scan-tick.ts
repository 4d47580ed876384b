import type { Connection, SignatureStatus } from '@solana/web3.js';
import type { DatabasePool } from 'slonik';
import { saveCursor, seenDeposits, setDepositState, upsertSeenDeposit, type Cursor, type DepositRow } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { TickResult } from '../evm/scan-tick.js';
import { inParallel, retryRead, type ReadRetry } from '../chain/reads.js';
import type { WatchSet } from '../chain/watch-set.js';
import { readReference, type ReadContext, type ReferenceProgress } from './read-reference.js';
import { droppedOpenDeposits, lastDeposits, openReferences, ownerKey, solRail, type OpenReference } from './references.js';

/**
 * How the Solana rail is read. The client is `@solana/web3.js` 1.x, on purpose: its `latest`
 * npm tag points at a short-lived 2.0.0 rewrite whose successor is `@solana/kit` (a different,
 * tree-shaken API still moving quickly), while 1.x (1.99) is the maintained classic `Connection`
 * API that Solana Pay's own libraries and most wallets' server code use. We need five read
 * calls; 1.x does them with one dependency we already have, and its response validation
 * (superstruct) rejects a malformed node answer instead of letting it reach the money code.
 */
export interface SolanaChainView {
  rail: 'USDT_SOL';
  environment: Environment;
  connection: Connection;
  /** The USDT mint (base58). */
  mint: string;
}

/** References read per tick; with more open links the watcher rotates through them over several ticks. */
export const maxReferencesPerTick = 200;
/** getTransaction calls per tick, shared by all references. */
export const maxTransactionsPerTick = 300;
/** References read at the same time. */
const concurrency = 8;
/** getSignatureStatuses takes at most 256 signatures per call. */
const statusBatch = 256;
/** Status reads: tries per batch within one tick and the first backoff; none starts this long into a tick. */
const statusRetry = { attempts: 3, backoffMs: 250 };
const statusReadBudgetMs = 60_000;

/** Per watcher (one watch set per rail and environment per worker): rotation and per-reference progress. */
class ScanState {
  offset = 0;
  progress = new Map<string, ReferenceProgress>();

  /** The next slice of references, and whether this slice ends a full round over all of them. */
  nextSlice(refs: OpenReference[]): { slice: OpenReference[]; roundEnds: boolean } {
    const open = new Set(refs.map((r) => r.reference));
    for (const key of this.progress.keys()) if (!open.has(key)) this.progress.delete(key);
    if (this.offset >= refs.length) this.offset = 0;
    const slice = refs.slice(this.offset, this.offset + maxReferencesPerTick);
    this.offset += slice.length;
    const roundEnds = this.offset >= refs.length;
    if (roundEnds) this.offset = 0;
    return { slice, roundEnds };
  }

  of(reference: string): ReferenceProgress {
    let p = this.progress.get(reference);
    if (!p) this.progress.set(reference, (p = {}));
    return p;
  }
}
const states = new WeakMap<WatchSet, ScanState>();

/**
 * One pass of the Solana watcher. Solana has no single log to scan by block range for a token:
 * each open link has its own Solana Pay reference, and the node indexes transactions by every
 * account they name, so the watcher asks, per reference, for what is new since the last
 * signature it read (see read-reference.ts), then judges each transaction by its token balances.
 * Then it settles what it has seen (see settleSeen). Progress lives per reference, not per slot:
 * the cursor only records the confirmed slot of the last tick, for operators and the workflow.
 * CONFIRMATIONS_USDT_SOL has no meaning here: Solana's finality is a commitment level of the
 * cluster (`finalized`, a rooted slot), not a count of blocks.
 */
export async function scanSolanaTick(pool: DatabasePool, view: SolanaChainView, watch: WatchSet, _cursor: Cursor | null, nowMs: number): Promise<TickResult> {
  const { connection, environment } = view;
  const retry: ReadRetry = { ...statusRetry, deadlineMs: Date.now() + statusReadBudgetMs };
  const [head, finalized] = await Promise.all([connection.getSlot('confirmed'), connection.getSlot('finalized')]);
  let state = states.get(watch);
  if (!state) states.set(watch, (state = new ScanState()));
  await watch.refresh(pool, nowMs);
  const { slice, roundEnds } = state.nextSlice(await openReferences(pool, environment, watch, nowMs));
  const floors = await lastDeposits(pool, solRail, environment, slice.map((r) => r.owner));
  const ctx: ReadContext = { pool, connection, environment, mint: view.mint, budget: { transactions: maxTransactionsPerTick } };
  const results = await inParallel(slice, concurrency, (r) => readReference(ctx, r, state.of(r.reference), floors.get(ownerKey(r.owner))));
  const readFailures = await settleSeen(pool, view, finalized, retry);
  await recheckDropped(pool, view, retry);
  const cursor: Cursor = { number: String(head), hash: null };
  await saveCursor(pool, solRail, environment, cursor);
  return {
    cursor,
    head: String(head),
    finalized: String(finalized),
    caughtUp: roundEnds && results.every((r) => r.complete),
    matched: results.reduce((n, r) => n + r.matched, 0),
    readFailures,
  };
}

type Statuses = { slot: number; value: (SignatureStatus | null)[] };

/**
 * The node's statuses of these signatures, or undefined when it would not give them (after a few
 * tries): an error, a timeout, a malformed body, or an answer that does not line up one status
 * per signature. A missing answer is never read as "unknown signature".
 */
async function statuses(connection: Connection, signatures: string[], retry: ReadRetry): Promise<Statuses | undefined> {
  return retryRead(async () => {
    const res = await connection.getSignatureStatuses(signatures, { searchTransactionHistory: true });
    return res.value.length === signatures.length ? { slot: res.context.slot, value: res.value } : undefined;
  }, retry);
}

const isFinalized = (s: SignatureStatus) => s.confirmationStatus === 'finalized' || (s.confirmationStatus === undefined && s.confirmations === null);

/**
 * Seen deposits become confirmed when their transaction is finalized (rooted). A seen deposit
 * is dropped only on proof that its fork was abandoned: the node (searching its whole history)
 * no longer knows the signature although the finalized slot, and the node's own view, have
 * moved past the slot the transaction was seen in. Had it been on the chain the cluster kept, it
 * would be finalized and known by then. While the finalized slot is still behind, an unknown
 * signature only waits: a node behind a load balancer may simply be lagging. A transaction that
 * finalized with an error also never paid. A status read that fails is no answer at all: its
 * deposits stay seen until a later tick reads them. Anything dropped by mistake is found again by
 * recheckDropped. Returns the number of status batches that could not be read.
 */
async function settleSeen(pool: DatabasePool, view: SolanaChainView, finalized: number, retry: ReadRetry): Promise<number> {
  const seen = await seenDeposits(pool, solRail, view.environment);
  let unread = 0;
  for (let i = 0; i < seen.length; i += statusBatch) {
    const chunk = seen.slice(i, i + statusBatch);
    const res = await statuses(view.connection, chunk.map((d) => d.tx_hash), retry);
    if (!res) {
      unread++;
      continue;
    }
    for (const [j, d] of chunk.entries()) {
      const s = res.value[j] ?? null;
      const slot = Number(d.block_number);
      let next: 'confirmed' | 'dropped' | undefined;
      if (s === null) next = finalized > slot && res.slot > slot ? 'dropped' : undefined;
      else if (isFinalized(s)) next = s.err === null ? 'confirmed' : 'dropped';
      if (next) await setDepositState(pool, solRail, view.environment, d.tx_hash, d.log_index, next);
    }
  }
  return unread;
}

/** A dropped deposit whose transaction the cluster knows again (landed in another fork) is seen again, at its new slot. */
async function recheckDropped(pool: DatabasePool, view: SolanaChainView, retry: ReadRetry): Promise<void> {
  const dropped: DepositRow[] = await droppedOpenDeposits(pool, solRail, view.environment);
  if (dropped.length === 0) return;
  const res = await statuses(view.connection, dropped.map((d) => d.tx_hash), retry);
  if (!res) return;
  for (const [i, d] of dropped.entries()) {
    const s = res.value[i];
    if (!s || s.err !== null) continue;
    await upsertSeenDeposit(pool, solRail, view.environment, {
      txHash: d.tx_hash,
      logIndex: d.log_index,
      to: d.to_address,
      from: d.from_address,
      amountMinor: BigInt(d.amount_minor),
      decimals: d.decimals,
      blockNumber: BigInt(s.slot),
      blockHash: null,
      owner: { kind: d.owner_kind, id: d.owner_id, storeId: d.store_id, derivedIndex: d.derived_index ?? undefined },
    });
  }
}
