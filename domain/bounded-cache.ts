/**
 * A map that keeps at most `limit` entries and forgets the least recently used first, in constant
 * time per call. Every bounded cache of a process uses it (derived addresses, branch keys, wallet
 * keys, API keys, rate-limit counts, webhook connection pools).
 *
 * Why not a `Map` in insertion order that drops `keys().next()` when full: V8 leaves a hole for
 * each deleted entry until it rebuilds the table, and finding the first key steps over every hole
 * before it. A full map that forgets one entry per call then pays for thousands of holes per call:
 * about 13 µs a call at 20,000 entries on these machines, against 0.3 µs here (docs/benchmarks.md,
 * "Bounded caches"). This keeps its own order in a linked list, so forgetting the oldest is one
 * step whatever was deleted before.
 */
interface Entry<K, V> {
  key: K;
  value: V;
  older: Entry<K, V> | null;
  newer: Entry<K, V> | null;
}

export class BoundedCache<K, V> {
  private readonly entries = new Map<K, Entry<K, V>>();
  /** The least recently used entry (forgotten next) and the most recently used one. */
  private oldest: Entry<K, V> | null = null;
  private newest: Entry<K, V> | null = null;

  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a bounded cache holds at least one entry; got ${String(limit)}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, which becomes the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.touch(entry);
    return entry.value;
  }

  /** The value without changing which entry is forgotten next. */
  peek(key: K): V | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Sets the value as the most recently used; answers the entry forgotten to make room, if any. */
  set(key: K, value: V): { key: K; value: V } | undefined {
    const present = this.entries.get(key);
    if (present !== undefined) {
      present.value = value;
      this.touch(present);
      return undefined;
    }
    const entry: Entry<K, V> = { key, value, older: this.newest, newer: null };
    if (this.newest) this.newest.newer = entry;
    this.newest = entry;
    this.oldest ??= entry;
    this.entries.set(key, entry);
    if (this.entries.size <= this.limit) return undefined;
    const dropped = this.oldest!;
    this.unlink(dropped);
    this.entries.delete(dropped.key);
    return { key: dropped.key, value: dropped.value };
  }

  delete(key: K): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.unlink(entry);
    this.entries.delete(key);
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.oldest = this.newest = null;
  }

  /** Keys from the least to the most recently used (tests, and a bounded sweep). */
  *keys(): IterableIterator<K> {
    for (let e = this.oldest; e; e = e.newer) yield e.key;
  }

  private touch(entry: Entry<K, V>): void {
    if (entry === this.newest) return;
    this.unlink(entry);
    entry.older = this.newest;
    entry.newer = null;
    this.newest!.newer = entry;
    this.newest = entry;
    this.oldest ??= entry;
  }

  private unlink(entry: Entry<K, V>): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = null;
  }
}
