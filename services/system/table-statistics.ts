import type { CommonQueryMethods } from 'slonik';
import { analyzeTable, tablesDueForAnalyze } from '../../db/table-statistics-repo.js';
import { nextTurn } from '../../rails/chain/event-loop.js';

/**
 * Fresh planner statistics without relying on autovacuum. The planner picks an index from them;
 * on a table it has no statistics for, it may pick one that reads every row of a store where the
 * primary key reads one. That is what slowed fresh derives round after round (issue 33): on a
 * PostgreSQL with autovacuum off, the record statement of each derive read all the store's
 * derived addresses, and derives fell from 790/s to 292/s over six rounds; one ANALYZE kept them
 * at 1,260–1,440/s. The embedded default (PGlite, a single-user PostgreSQL) never runs
 * autovacuum at all, and servers do turn it off.
 *
 * Where autovacuum is on and keeping up, a table it analyzed within the last `quietSeconds` is
 * left to it, so this adds nothing there; where it is off or behind, this does its analyze part.
 */
export const statisticsQuietSeconds = 60;

/** The most tables one pass analyzes (the most changed first); the rest wait for the next pass. */
const tablesPerPass = 10;

export interface RefreshOptions {
  quietSeconds?: number;
  /** Checked between tables: a stopping worker does not wait for the rest of the pass. */
  isStopped?: () => boolean;
  /** A table that could not be analyzed (dropped meanwhile, say); the pass goes on with the others. */
  onTableError?: (table: string, err: unknown) => void;
}

/**
 * ANALYZEs the tables whose statistics are stale (see above), one statement at a time with a
 * turn of the event loop between them (the embedded PGlite runs each in this process); answers
 * the names of those it ran ANALYZE on. A table another session is vacuuming or analyzing is
 * skipped, not waited for (it is among the names: PostgreSQL only warns), and stays stale until
 * a later pass finds it again.
 */
export async function refreshStaleStatistics(db: CommonQueryMethods, opts: RefreshOptions = {}): Promise<string[]> {
  const analyzed: string[] = [];
  for (const t of await tablesDueForAnalyze(db, opts.quietSeconds ?? statisticsQuietSeconds, tablesPerPass)) {
    if (opts.isStopped?.()) break;
    try {
      await analyzeTable(db, t);
      analyzed.push(t.table);
    } catch (err) {
      opts.onTableError?.(t.table, err);
    }
    await nextTurn();
  }
  return analyzed;
}
