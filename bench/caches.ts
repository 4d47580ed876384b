// A full bounded cache that forgets one entry per call (every call a key it has not seen: a new
// derived index, a new client of the rate limit), at the sizes the process uses: domain/bounded-cache.ts
// against what it replaced, a Map in insertion order that deletes `keys().next()` when full, in
// alternating rounds of one run.
import { BoundedCache } from '../domain/bounded-cache.js';

interface Cache {
  get(key: string): number | undefined;
  set(key: string, value: number): void;
}

/** The replaced pattern: the least recently used moved last by delete + set, the first key dropped when full. */
function mapInInsertionOrder(limit: number): Cache {
  const m = new Map<string, number>();
  return {
    get: (key) => {
      const v = m.get(key);
      if (v !== undefined) m.delete(key), m.set(key, v);
      return v;
    },
    set: (key, value) => {
      m.delete(key);
      m.set(key, value);
      if (m.size > limit) m.delete(m.keys().next().value!);
    },
  };
}

function callsPerSecond(cache: Cache, keys: readonly string[]): number {
  const t0 = process.hrtime.bigint();
  for (const key of keys) if (cache.get(key) === undefined) cache.set(key, 1);
  return Math.round(keys.length / (Number(process.hrtime.bigint() - t0) / 1e9));
}

export function benchCaches(calls = 200_000, rounds = 5) {
  const result: Record<string, unknown> = { calls, rounds };
  for (const [name, limit] of [['receiveAddresses', 20_000], ['rateLimitClients', 10_000]] as const) {
    const bounded = new BoundedCache<string, number>(limit);
    const map = mapInInsertionOrder(limit);
    let next = 0;
    const fill = (c: Cache) => { for (let i = 0; i < limit; i++) c.set(`fill:${i}`, 1); };
    fill(bounded);
    fill(map);
    const now: number[] = [];
    const before: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const keys = Array.from({ length: calls }, () => `k:${next++}`);
      now.push(callsPerSecond(bounded, keys));
      before.push(callsPerSecond(map, keys));
      if (bounded.size !== limit) throw new Error(`caches: the bounded cache holds ${bounded.size}, not ${limit}`);
    }
    const best = (xs: number[]) => Math.max(...xs);
    result[name] = { limit, callsPerSecond: best(now), mapCallsPerSecond: best(before), ratio: Math.round((best(now) / best(before)) * 100) / 100 };
  }
  return result;
}
