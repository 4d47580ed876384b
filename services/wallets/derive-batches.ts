import type { CommonQueryMethods } from 'slonik';
import { recordDerives, type DeriveRecord, type HandedOutRow } from '../../db/derived-address-repo.js';
import type { Environment } from '../../domain/environment.js';

/**
 * Derives of one store recorded together (group commit): while one statement records a store's
 * derives, the derives that arrive for it wait, and the next statement records all of them at
 * once (`recordDerives`: one statement, one commit). A lone derive goes at once, as before; a
 * burst costs PostgreSQL one statement per round trip instead of one per derive. Each derive
 * still answers only after the statement that recorded its index committed, so the watch
 * guarantee is the same: no address is answered before it is watched. Derives made from
 * different keys (a key changed between two of them) never share a statement.
 */
const maxPerStatement = 100;

interface Waiting {
  index: number;
  handed: readonly HandedOutRow[];
  resolve: (r: DeriveRecord) => void;
  reject: (err: unknown) => void;
}

/** Per pool (one per process; tests open several), the waiting derives by store, environment and keys. */
const queuesOf = new WeakMap<CommonQueryMethods, Map<string, Waiting[]>>();

export function recordDeriveSoon(db: CommonQueryMethods, storeId: string, env: Environment, index: number, handed: readonly HandedOutRow[]): Promise<DeriveRecord> {
  const id = [storeId, env, ...handed.map((h) => `${h.family}:${h.publicKey}`)].join('\u0000');
  let queues = queuesOf.get(db);
  if (!queues) queuesOf.set(db, (queues = new Map()));
  const byId = queues;
  return new Promise<DeriveRecord>((resolve, reject) => {
    const waiting = byId.get(id);
    if (waiting) {
      waiting.push({ index, handed, resolve, reject });
      return;
    }
    const queue: Waiting[] = [{ index, handed, resolve, reject }];
    byId.set(id, queue);
    void drain(db, storeId, env, queue, () => byId.delete(id));
  });
}

/**
 * Records the queue's derives a statement at a time until none wait, then forgets the queue in
 * the same synchronous step that found it empty: a derive arriving later starts a new one, and
 * none can join a queue nobody drains any more.
 */
async function drain(db: CommonQueryMethods, storeId: string, env: Environment, queue: Waiting[], forget: () => void): Promise<void> {
  for (;;) {
    const batch = queue.splice(0, maxPerStatement);
    try {
      const record = await recordDerives(db, storeId, env, batch);
      for (const w of batch) w.resolve(record);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
    if (queue.length === 0) {
      forget();
      return;
    }
  }
}
