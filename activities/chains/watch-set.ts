import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { DepositOwner } from '../../db/chain-repo.js';
import type { Environment } from '../../domain/environment.js';
import { deriveAddress, receiveBranch } from '../../domain/hd/derive.js';

export type Family = 'evm' | 'tron' | 'sol_ref';

/** How far past the highest index handed out by derive the receive branch is watched. */
export const derivedGap = 20;
const fullReloadMs = 5 * 60_000;

interface Entry extends DepositOwner {
  watchUntilMs: number;
}

const watchedRow = z.object({
  address: z.string(),
  owner_kind: z.enum(['payment_link', 'invoice']),
  owner_id: z.string(),
  store_id: z.string(),
  watch_until: z.string(),
  seq: z.string(),
});

const derivedRow = z.object({ store_id: z.string(), public_key: z.string(), highest_index: z.number() });

/**
 * The addresses one watcher matches transfers against, in memory: a Map lookup per log, so a
 * scan costs the same with ten addresses or millions. It loads new rows incrementally by their
 * sequence number and reloads fully every few minutes to forget closed ones. Receive-branch
 * addresses (POST /v1/wallets/derive) are derived here, up to the highest index + 20, and
 * re-derived only when a store's highest index moves.
 */
export class WatchSet {
  private entries = new Map<string, Entry>();
  private lastSeq = 0n;
  private loadedAtMs = 0;
  private derived = new Map<string, { key: string; addresses: string[] }>();

  constructor(
    private readonly family: Family,
    private readonly environment: Environment,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  static normalize(family: Family, address: string): string {
    return family === 'evm' ? address.toLowerCase() : address;
  }

  async refresh(pool: DatabasePool, nowMs: number): Promise<void> {
    if (nowMs - this.loadedAtMs > fullReloadMs) {
      this.entries = new Map();
      this.derived = new Map();
      this.lastSeq = 0n;
      this.loadedAtMs = nowMs;
    }
    const rows = await pool.any(sql.type(watchedRow)`
      SELECT address, owner_kind, owner_id, store_id, watch_until, seq::text FROM watched_addresses
      WHERE family = ${this.family} AND environment = ${this.environment} AND seq > ${String(this.lastSeq)}
      ORDER BY seq`);
    for (const r of rows) {
      this.entries.set(WatchSet.normalize(this.family, r.address), {
        kind: r.owner_kind,
        id: r.owner_id,
        storeId: r.store_id,
        watchUntilMs: Date.parse(r.watch_until),
      });
      this.lastSeq = BigInt(r.seq);
    }
    if (this.family !== 'sol_ref') await this.refreshDerived(pool);
  }

  private async refreshDerived(pool: DatabasePool): Promise<void> {
    const kind = this.family as 'evm' | 'tron';
    const rows = await pool.any(sql.type(derivedRow)`
      SELECT w.store_id, w.public_key, m.highest_index FROM store_wallets w
      JOIN derived_index_marks m ON m.store_id = w.store_id AND m.environment = w.environment
      WHERE w.environment = ${this.environment} AND w.kind = ${kind}`);
    for (const r of rows) {
      const key = `${r.public_key}:${r.highest_index}`;
      if (this.derived.get(r.store_id)?.key === key) continue;
      for (const old of this.derived.get(r.store_id)?.addresses ?? []) this.entries.delete(old);
      const addresses: string[] = [];
      for (let i = 0; i <= r.highest_index + derivedGap; i++) {
        const address = WatchSet.normalize(this.family, deriveAddress(r.public_key, kind, receiveBranch, i));
        this.entries.set(address, { kind: 'derived', id: `${r.store_id}:${i}`, storeId: r.store_id, derivedIndex: i, watchUntilMs: Infinity });
        addresses.push(address);
      }
      this.derived.set(r.store_id, { key, addresses });
    }
  }

  /** The owner of an address, if it is watched and its window is still open. */
  match(address: string, nowMs: number): DepositOwner | undefined {
    const e = this.entries.get(WatchSet.normalize(this.family, address));
    if (!e || e.watchUntilMs < nowMs) return undefined;
    return { kind: e.kind, id: e.id, storeId: e.storeId, derivedIndex: e.derivedIndex };
  }

  /** For benchmarks and tests: adds entries without the database. */
  addForTest(address: string, owner: DepositOwner, watchUntilMs = Infinity): void {
    this.entries.set(WatchSet.normalize(this.family, address), { ...owner, watchUntilMs });
  }
}
