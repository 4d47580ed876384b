import type { CommonQueryMethods } from 'slonik';
import type { Logger } from 'pino';
import { refreshStaleStatistics } from '../services/system/table-statistics.js';
import { runPeriodicPass } from './periodic-pass.js';

/** How often a worker looks for tables whose planner statistics nobody refreshed. */
export const statisticsIntervalMs = 30_000;

/**
 * Runs beside the Temporal workers of the payments queue: refreshes the planner statistics that
 * autovacuum did not (services/system/table-statistics.ts). One pass at a time; a failed pass is
 * logged and tried again next time.
 */
export function runStatisticsKeeper(deps: { pool: CommonQueryMethods; logger?: Pick<Logger, 'warn' | 'info'> }, intervalMs = statisticsIntervalMs): { stop(): Promise<void> } {
  return runPeriodicPass(
    intervalMs,
    async (isStopped) => {
      const analyzed = await refreshStaleStatistics(deps.pool, {
        isStopped,
        onTableError: (table, err) => deps.logger?.warn({ err, table }, 'could not analyze a table whose planner statistics are stale; trying again next pass'),
      });
      if (analyzed.length > 0) deps.logger?.info({ tables: analyzed }, 'analyzed tables whose planner statistics were stale (autovacuum off or behind)');
    },
    (err) => deps.logger?.warn({ err }, 'could not refresh stale planner statistics; trying again'),
  );
}
