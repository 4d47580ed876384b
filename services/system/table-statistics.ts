import type { CommonQueryMethods } from 'slonik';
import { analyzeTable, tablesDueForAnalyze } from '../../db/table-statistics-repo.js';

/**
 * Fresh planner statistics without relying on autovacuum. The planner picks an index from them;
 * on a table it has no statistics for, it may pick one that reads every row of a store where the
 * primary key reads one. That is what slowed fresh derives round after round (issue 33): on a
 * PostgreSQL with autovacuum off, the record statement of each derive read all the store's
 * derived addresses, and derives fell from 790/s to 282/s over six rounds; one ANALYZE kept them
 * at 1,260–1,440/s. The embedded default (PGlite, a single-user PostgreSQL) never runs
 * autovacuum at all, and servers do turn it off.
 *
 * Where autovacuum is on and keeping up, a table it analyzed within the last `quietSeconds` is
 * left to it, so this adds nothing there; where it is off or behind, this does its analyze part.
 */
export const statisticsQuietSeconds = 60;

/** The most tables one pass analyzes (the most changed first); the rest wait for the next pass. */
const tablesPerPass = 10;

/** ANALYZEs the tables whose statistics are stale (see above), one at a time; answers their names. */
export async function refreshStaleStatistics(db: CommonQueryMethods, quietSeconds = statisticsQuietSeconds): Promise<string[]> {
  const due = await tablesDueForAnalyze(db, quietSeconds, tablesPerPass);
  for (const table of due) await analyzeTable(db, table);
  return [...due];
}
