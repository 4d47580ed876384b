import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The planner's statistics of this schema's tables (`pg_stat_user_tables`), and ANALYZE.
 * services/system/table-statistics.ts says when they are refreshed and why.
 */

/**
 * Tables of the current schema changed by more than autovacuum's own analyze threshold (50 rows
 * plus a tenth of the table) since their last ANALYZE, which is older than `quietSeconds` (or
 * never ran): the statistics nobody has refreshed. Most changed first.
 */
export async function tablesDueForAnalyze(db: CommonQueryMethods, quietSeconds: number, limit: number): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ relname: z.string() }))`
    SELECT relname FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND n_mod_since_analyze > 50 + n_live_tup / 10
      AND coalesce(greatest(last_analyze, last_autoanalyze), '-infinity') < now() - make_interval(secs => ${quietSeconds})
    ORDER BY n_mod_since_analyze DESC LIMIT ${limit}`);
}

/**
 * ANALYZE of one table of the current schema: samples it (at most 30,000 rows at the default
 * statistics target) without blocking its readers or writers. Skipped, not waited for, while
 * another ANALYZE or VACUUM of it runs (autovacuum, or another worker's pass).
 */
export async function analyzeTable(db: CommonQueryMethods, table: string): Promise<void> {
  await db.query(sql.unsafe`ANALYZE (SKIP_LOCKED) ${sql.identifier([table])}`);
}
