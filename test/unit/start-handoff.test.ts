import { expect, it } from '@jest/globals';
import { startHandoff } from '../../services/payment-links/start-handoff.js';

/** A start the test finishes by hand: `finish(true)` started, `finish(false)` Temporal refused. */
function manualStarts() {
  const pending = new Map<string, (ok: boolean) => void>();
  const run = (id: string) => () => new Promise<boolean>((resolve) => pending.set(id, resolve));
  const finish = (id: string, ok: boolean) => {
    pending.get(id)!(ok);
    pending.delete(id);
  };
  return { pending, run, finish };
}
const turn = () => new Promise((r) => setImmediate(r));

it('runs at most `concurrency` starts at once, and records those that started in batches', async () => {
  const marked: string[][] = [];
  const handoff = startHandoff(async (ids) => void marked.push(ids), { concurrency: 2, maxWaiting: 10, pauseAfterFailureMs: 1_000, markBatch: 50 });
  const starts = manualStarts();
  for (const id of ['a', 'b', 'c', 'd']) expect(handoff.offer(id, starts.run(id))).toBe(true);
  await turn();
  expect([...starts.pending.keys()]).toEqual(['a', 'b']);
  starts.finish('a', true);
  await turn();
  expect([...starts.pending.keys()]).toEqual(['b', 'c']);
  for (const id of ['b', 'c']) starts.finish(id, true);
  await turn();
  starts.finish('d', true);
  await handoff.drain();
  expect(marked.flat().sort()).toEqual(['a', 'b', 'c', 'd']);
  expect(marked.length).toBeLessThan(4);
});

it('after a refused start, drops what waits and takes nothing for a while: the workers start those', async () => {
  const marked: string[] = [];
  const handoff = startHandoff(async (ids) => void marked.push(...ids), { concurrency: 1, maxWaiting: 10, pauseAfterFailureMs: 60_000, markBatch: 50 });
  const starts = manualStarts();
  handoff.offer('a', starts.run('a'));
  handoff.offer('b', starts.run('b'));
  await turn();
  starts.finish('a', false);
  await handoff.drain();
  expect(starts.pending.size).toBe(0); // 'b' never ran
  expect(handoff.offer('c', starts.run('c'))).toBe(false);
  expect(marked).toEqual([]);
});

it('refuses a start past `maxWaiting`, and a start that throws counts as refused', async () => {
  const handoff = startHandoff(async () => undefined, { concurrency: 1, maxWaiting: 2, pauseAfterFailureMs: 60_000, markBatch: 50 });
  const starts = manualStarts();
  expect([handoff.offer('a', starts.run('a')), handoff.offer('b', starts.run('b')), handoff.offer('c', starts.run('c'))]).toEqual([true, true, false]);
  await turn();
  starts.finish('a', true);
  await turn();
  expect([...starts.pending.keys()]).toEqual(['b']);
  const failing = startHandoff(async () => undefined, { concurrency: 1, maxWaiting: 2, pauseAfterFailureMs: 60_000, markBatch: 50 });
  failing.offer('x', () => Promise.reject(new Error('boom')));
  await failing.drain();
  expect(failing.offer('y', async () => true)).toBe(false);
  starts.finish('b', true);
  await handoff.drain();
});

it('a failed record leaves the rows to the workers and does not stop the hand-off', async () => {
  let calls = 0;
  const handoff = startHandoff(async () => {
    calls++;
    throw new Error('database away');
  }, { concurrency: 4, maxWaiting: 10, pauseAfterFailureMs: 60_000, markBatch: 50 });
  handoff.offer('a', async () => true);
  await handoff.drain();
  expect(calls).toBe(1);
  expect(handoff.offer('b', async () => true)).toBe(true);
  await handoff.drain();
  expect(calls).toBe(2);
});
