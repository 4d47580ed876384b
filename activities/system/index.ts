import type { DatabasePool } from 'slonik';
import { databaseTime } from '../../db/pool.js';

export function createSystemActivities(deps: { pool: DatabasePool }) {
  return {
    /** Reads the database clock and the number of applied migrations: proves the worker reaches PostgreSQL. */
    async databaseTime(): Promise<{ now: string; migrations: number }> {
      return databaseTime(deps.pool);
    },
  };
}

export type SystemActivities = ReturnType<typeof createSystemActivities>;
