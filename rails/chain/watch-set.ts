import type { DatabasePool } from 'slonik';
import type { DepositOwner } from '../../db/chain-repo.js';
import {
  derivedAddressPage,
  snapshotXmin,
  storesWithKeyChangedSince,
  watchedAddressPage,
  type DerivedFilter,
  type DerivedRow,
  type WatchedRow,
  type WatchFamily,
} from '../../db/watch-repo.js';
import type { Environment } from '../../domain/environment.js';
import { AddressBook, evmKey, tronKey } from './address-book.js';
import { nextTurn } from './event-loop.js';

export type Family = WatchFamily;

const fullReloadMs = 5 * 60_000;
/** Rows per query; the event loop gets a turn between pages, so a large load never holds it. */
const pageSize = 2_000;

async function eachPage<R>(load: (after: R | null) => Promise<readonly R[]>, use: (row: R) => void): Promise<void> {
  let after: R | null = null;
  for (;;) {
    const rows = await load(after);
    for (const r of rows) use(r);
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!;
    await nextTurn();
  }
}

/**
 * The addresses one watcher matches transfers against, in memory (an `AddressBook`, about a
 * hundred bytes an address): a Map lookup per log, so a scan costs the same with ten addresses or
 * millions. It holds link and invoice addresses and the
 * receive-branch addresses derive handed out (read from their rows: this set never derives).
 *
 * Each refresh loads only what was written since the previous one, found by transaction id, not
 * by a sequence number: a row that the previous load could not see, because its transaction had
 * not committed yet, belongs to a transaction at or above that load's snapshot xmin, so asking
 * for created_xid >= that xmin finds it whatever the commit order (re-reading known rows is
 * harmless). Every few minutes a full reload forgets closed links, pruned gap indexes and keys no
 * longer registered. Refreshes run one at a time (the EVM rails share one set).
 */
export class WatchSet {
  private entries: AddressBook;
  private sinceXid: string | null = null;
  private loadedAtMs = 0;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly family: Family,
    private readonly environment: Environment,
  ) {
    this.entries = this.newBook();
  }

  /** EVM and TRON addresses by their bytes (so either form of a TRON address matches); Solana references as written. */
  private newBook(): AddressBook {
    return this.family === 'sol_ref' ? new AddressBook((address) => address, false) : new AddressBook(this.family === 'evm' ? evmKey : tronKey);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Brings the set up to date with every row committed before the call. */
  refresh(pool: DatabasePool, nowMs: number): Promise<void> {
    const run = this.queue.then(() => this.load(pool, nowMs));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async load(pool: DatabasePool, nowMs: number): Promise<void> {
    const full = this.sinceXid === null || nowMs - this.loadedAtMs > fullReloadMs;
    const since = full ? null : this.sinceXid;
    // Taken before any page is read: a row some page below misses was written at or above it.
    const xmin = await snapshotXmin(pool);
    // A full load fills a new map and swaps it in whole, so a tick matching meanwhile never sees half a set.
    const into = full ? this.newBook() : this.entries;
    await this.loadWatched(pool, into, since);
    if (this.family !== 'sol_ref') await this.loadDerived(pool, into, this.family, since);
    this.entries = into;
    this.sinceXid = xmin;
    if (full) this.loadedAtMs = nowMs;
  }

  private loadWatched(pool: DatabasePool, into: AddressBook, sinceXid: string | null): Promise<void> {
    const { family, environment: env } = this;
    return eachPage<WatchedRow>(
      (after) => watchedAddressPage(pool, { family, env, sinceXid, after: after?.address ?? null, limit: pageSize }),
      (r) => into.set(r.address, { kind: r.owner_kind, id: r.owner_id, storeId: r.store_id }, Date.parse(r.watch_until)),
    );
  }

  private async loadDerived(pool: DatabasePool, into: AddressBook, family: 'tron' | 'evm', sinceXid: string | null): Promise<void> {
    const env = this.environment;
    const loadPages = (filter: DerivedFilter) =>
      eachPage<DerivedRow>(
        (after) => derivedAddressPage(pool, { family, env, filter, after: after && { storeId: after.store_id, index: after.derived_index }, limit: pageSize }),
        (r) => into.set(r.address, { kind: 'derived', id: '', storeId: r.store_id, derivedIndex: r.derived_index }, Infinity),
      );
    if (sinceXid === null) return loadPages({ all: true });
    await loadPages({ sinceXid });
    // A key registered (again) since the last load brings all of its rows, whenever they were written.
    const stores = await storesWithKeyChangedSince(pool, family, env, sinceXid);
    if (stores.length) await loadPages({ storeIds: stores });
  }

  /**
   * The owner of an address, if it is watched and its window is still open. EVM: any case of the
   * hex form, with or without `0x`. TRON: base58check or the 20-byte hex form its logs carry.
   */
  match(address: string, nowMs: number): DepositOwner | undefined {
    const e = this.entries.get(address);
    if (!e || e.untilMs < nowMs) return undefined;
    return e.owner;
  }

  /** For benchmarks and tests: adds entries without the database. */
  addForTest(address: string, owner: DepositOwner, watchUntilMs = Infinity): void {
    this.entries.set(address, owner, watchUntilMs);
  }
}
