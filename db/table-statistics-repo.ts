import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The planner's statistics of this schema's tables (`pg_stat_user_tables`), and ANALYZE.
 * services/system/table-statistics.ts says when they are refreshed and why.
 */

export interface StaleTable {
  schema: string;
  table: string;
}

const staleRow = z.object({ schema: z.string(), table: z.string() });

/**
 * Tables of the current schema, owned by this role (ANALYZE skips any other with a warning),
 * changed by more than autovacuum's own analyze threshold (50 rows plus a tenth of the table)
 * since their last ANALYZE, which is older than `quietSeconds` (or never ran): the statistics
 * nobody has refreshed. Most changed first.
 */
export async function tablesDueForAnalyze(db: CommonQueryMethods, quietSeconds: number, limit: number): Promise<readonly StaleTable[]> {
  return db.any(sql.type(staleRow)`
    SELECT s.schemaname AS schema, s.relname AS table FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema() AND pg_has_role(c.relowner, 'USAGE')
      AND s.n_mod_since_analyze > 50 + s.n_live_tup / 10
      AND coalesce(greatest(s.last_analyze, s.last_autoanalyze), '-infinity') < now() - make_interval(secs => ${quietSeconds})
    ORDER BY s.n_mod_since_analyze DESC LIMIT ${limit}`);
}

/**
 * ANALYZE of one table: samples it (at most 30,000 rows at the default statistics target)
 * without blocking its readers or writers. Skipped, not waited for, while another ANALYZE or
 * VACUUM of it runs (autovacuum, or another worker's pass): the next pass finds it again.
 */
export async function analyzeTable(db: CommonQueryMethods, t: StaleTable): Promise<void> {
  await db.query(sql.unsafe`ANALYZE (SKIP_LOCKED) ${sql.identifier([t.schema, t.table])}`);
}
