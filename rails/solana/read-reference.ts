import { PublicKey, type ConfirmedSignatureInfo, type Connection } from '@solana/web3.js';
import type { DatabasePool } from 'slonik';
import { upsertSeenDeposit } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import { tokenCredit } from './balance-delta.js';
import { solRail, type OpenReference, type SignatureMark } from './references.js';

export interface ListingLimits {
  /** Signatures per listing call: the RPC's own maximum is 1000. */
  pageSize: number;
  /** Pages one reference lists per tick; a longer backlog is walked down over several ticks. */
  maxPages: number;
}
export const defaultListingLimits: ListingLimits = { pageSize: 1_000, maxPages: 5 };

export interface ReadContext {
  pool: DatabasePool;
  connection: Connection;
  environment: Environment;
  mint: string;
  /** getTransaction calls left in this tick, shared by every reference. */
  budget: { transactions: number };
  limits?: ListingLimits;
}

/** What the watcher remembers about one reference between ticks (in memory; the database is the floor). */
export interface ReferenceProgress {
  /** Every transaction up to and including this one has been read. */
  readThrough?: SignatureMark;
  /** A backlog too long for one tick: listing continues below this signature. */
  resumeBefore?: string;
}

type Listing = { complete: true; newestFirst: ConfirmedSignatureInfo[] } | { complete: false; oldest: string };

/**
 * Signatures of confirmed transactions naming the reference, newer than `until` (and older than
 * `before` when walking down a backlog), newest first as the node returns them. The end of the
 * history is known only from an empty answer: a provider that silently caps `limit` below what
 * was asked would otherwise look like the end, and older signatures would be skipped for good.
 * After `maxPages` full pages one single-signature probe tells a backlog from its last page.
 */
async function listSignatures(ctx: ReadContext, reference: string, until: string | undefined, before: string | undefined): Promise<Listing> {
  const { pageSize, maxPages } = ctx.limits ?? defaultListingLimits;
  const address = new PublicKey(reference);
  const newestFirst: ConfirmedSignatureInfo[] = [];
  let cursor = before;
  for (let page = 0; ; page++) {
    const probe = page === maxPages;
    const batch = await ctx.connection.getSignaturesForAddress(address, { until, before: cursor, limit: probe ? 1 : pageSize }, 'confirmed');
    if (batch.length === 0) return { complete: true, newestFirst };
    if (probe) return { complete: false, oldest: cursor! };
    newestFirst.push(...batch);
    cursor = batch[batch.length - 1]!.signature;
  }
}

const newer = (a: SignatureMark | undefined, b: SignatureMark | undefined) => (!a ? b : !b ? a : a.slot >= b.slot ? a : b);

/**
 * Reads what is new on one reference and records every payment it finds as seen. Transactions
 * are read oldest first and progress moves only past a transaction that was fully judged, so
 * the next `until` (this progress, or the newest recorded deposit after a restart) never skips
 * an unread one. A signature the node lists but cannot serve yet stops the reference until the
 * next tick. Returns the number of payments found and whether the reference is fully read.
 */
export async function readReference(ctx: ReadContext, ref: OpenReference, progress: ReferenceProgress, floor: SignatureMark | undefined): Promise<{ matched: number; complete: boolean }> {
  const until = newer(progress.readThrough, floor)?.signature;
  const resumed = progress.resumeBefore;
  const listing = await listSignatures(ctx, ref.reference, until, resumed);
  if (!listing.complete) {
    progress.resumeBefore = listing.oldest;
    return { matched: 0, complete: false };
  }
  let matched = 0;
  for (const info of listing.newestFirst.reverse()) {
    if (info.err === null) {
      if (ctx.budget.transactions <= 0) return { matched, complete: false };
      ctx.budget.transactions--;
      const tx = await ctx.connection.getParsedTransaction(info.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      if (!tx) return { matched, complete: false };
      const credit = tokenCredit(tx, ctx.mint, ref.recipient);
      if (credit.creditMinor > 0n) {
        matched++;
        await upsertSeenDeposit(ctx.pool, solRail, ctx.environment, {
          txHash: info.signature,
          logIndex: 0,
          to: ref.recipient,
          from: credit.payer,
          amountMinor: credit.creditMinor,
          decimals: credit.decimals,
          blockNumber: BigInt(tx.slot),
          blockHash: null,
          owner: ref.owner,
        });
      }
    }
    progress.readThrough = { signature: info.signature, slot: info.slot };
  }
  // A finished backlog chunk was the oldest part; what is newer than it is listed next tick.
  // (A chunk cut short above keeps its bound, so the next tick lists only its unread rest.)
  progress.resumeBefore = undefined;
  return { matched, complete: resumed === undefined };
}
