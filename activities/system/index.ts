import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

export function createSystemActivities(deps: { pool: DatabasePool }) {
  return {
    /** Reads the database clock and the number of applied migrations: proves the worker reaches PostgreSQL. */
    async databaseTime(): Promise<{ now: string; migrations: number }> {
      const row = await deps.pool.one(sql.type(z.object({ now: z.string(), migrations: z.number() }))`
        SELECT now() AS now, (SELECT count(*) FROM schema_migrations)::int AS migrations`);
      return { now: row.now, migrations: row.migrations };
    },
  };
}

export type SystemActivities = ReturnType<typeof createSystemActivities>;
