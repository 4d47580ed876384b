import { describe, expect, it } from '@jest/globals';
import { BoundedCache } from '../../domain/bounded-cache.js';

/**
 * The bounded cache every per-process memory uses (domain/bounded-cache.ts): never more than its
 * limit, the least recently used forgotten first, and the same answers as the obvious model (a
 * list in use order) through long random runs of every call.
 */
describe('BoundedCache', () => {
  it('refuses a limit that holds nothing or is not a whole number', () => {
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) expect(() => new BoundedCache(limit)).toThrow(RangeError);
    expect(new BoundedCache(1).limit).toBe(1);
  });

  it('forgets the least recently used first: a read or a write counts as a use, a peek does not', () => {
    const c = new BoundedCache<string, number>(3);
    expect(c.set('a', 1)).toBeUndefined();
    c.set('b', 2);
    c.set('c', 3);
    expect(c.get('a')).toBe(1); // a is now the most recent: b goes next
    expect(c.peek('b')).toBe(2); // a peek leaves b the oldest
    expect(c.set('d', 4)).toEqual({ key: 'b', value: 2 });
    expect([...c.keys()]).toEqual(['c', 'a', 'd']);
    expect(c.set('c', 30)).toBeUndefined(); // an update is a use, and forgets nothing
    expect([...c.keys()]).toEqual(['a', 'd', 'c']);
    expect(c.set('e', 5)).toEqual({ key: 'a', value: 1 });
    expect(c.size).toBe(3);
    expect(c.get('a')).toBeUndefined();
    expect(c.has('a')).toBe(false);
    expect(c.get('c')).toBe(30);
  });

  it('deletes from the oldest end, the newest end and the middle, and starts again after clear', () => {
    const c = new BoundedCache<number, string>(4);
    for (const k of [1, 2, 3, 4]) c.set(k, String(k));
    expect(c.delete(1)).toBe(true);
    expect(c.delete(4)).toBe(true);
    expect(c.delete(9)).toBe(false);
    expect([...c.keys()]).toEqual([2, 3]);
    c.set(5, '5');
    expect(c.delete(3)).toBe(true);
    expect([...c.keys()]).toEqual([2, 5]);
    expect(c.delete(2) && c.delete(5)).toBe(true);
    expect([...c.keys()]).toEqual([]);
    c.set(6, '6');
    expect([...c.keys()]).toEqual([6]);
    c.clear();
    expect(c.size).toBe(0);
    expect(c.get(6)).toBeUndefined();
    for (const k of [7, 8, 9, 10, 11]) c.set(k, String(k));
    expect([...c.keys()]).toEqual([8, 9, 10, 11]);
  });

  it('holds one entry at a limit of one', () => {
    const c = new BoundedCache<string, number>(1);
    c.set('a', 1);
    expect(c.set('b', 2)).toEqual({ key: 'a', value: 1 });
    expect(c.get('b')).toBe(2);
    expect(c.set('b', 3)).toBeUndefined();
    expect([...c.keys()]).toEqual(['b']);
  });

  it('answers as a list kept in use order, through 20,000 random calls', () => {
    // A seeded generator, so a failure repeats.
    let seed = 20261129;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (const limit of [1, 2, 7, 64]) {
      const c = new BoundedCache<number, number>(limit);
      let model: Array<[number, number]> = [];
      const use = (k: number) => {
        const at = model.findIndex(([key]) => key === k);
        const [e] = model.splice(at, 1);
        model.push(e!);
        return e![1];
      };
      for (let step = 0; step < 5_000; step++) {
        const key = next(limit * 3);
        const op = next(5);
        const inModel = model.some(([k]) => k === key);
        if (op === 0 || op === 1) {
          const value = next(1000);
          let dropped: { key: number; value: number } | undefined;
          if (inModel) {
            use(key);
            model[model.length - 1]![1] = value;
          } else {
            model.push([key, value]);
            if (model.length > limit) {
              const [k, v] = model.shift()!;
              dropped = { key: k, value: v };
            }
          }
          expect(c.set(key, value)).toEqual(dropped);
        } else if (op === 2) {
          expect(c.get(key)).toBe(inModel ? use(key) : undefined);
        } else if (op === 3) {
          expect(c.peek(key)).toBe(model.find(([k]) => k === key)?.[1]);
        } else {
          expect(c.delete(key)).toBe(inModel);
          model = model.filter(([k]) => k !== key);
        }
        expect(c.size).toBe(model.length);
        expect(c.size).toBeLessThanOrEqual(limit);
      }
      expect([...c.keys()]).toEqual(model.map(([k]) => k));
    }
  });
});
