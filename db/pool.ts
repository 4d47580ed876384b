import { createPool, createBigintTypeParser, type DatabasePool } from 'slonik';

export type { DatabasePool } from 'slonik';

/**
 * Type parsers chosen for money safety: `numeric` stays a string (never a float), `int8` becomes
 * a number only for counters (money columns are `numeric`), timestamps become ISO 8601 strings.
 */
const typeParsers = [
  createBigintTypeParser(),
  { name: 'numeric', parse: (value: string) => value },
  { name: 'timestamptz', parse: (value: string) => new Date(value).toISOString() },
  { name: 'timestamp', parse: (value: string) => new Date(`${value}Z`).toISOString() },
];

export async function openPool(connectionString: string, maximumPoolSize = 10): Promise<DatabasePool> {
  return createPool(connectionString, {
    typeParsers,
    maximumPoolSize,
    connectionTimeout: 10_000,
    statementTimeout: 30_000,
    idleTimeout: 10_000,
  });
}
