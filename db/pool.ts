import { BackendTerminatedError, ConnectionError, createPool, createBigintTypeParser, sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createPreparedStatementsDriverFactory } from './pg-driver.js';
import { withSingleStatementsOnPg } from './pool-single-statements.js';

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

/**
 * The pool every part queries through. A connection goes back to the pool as it is: slonik's
 * default reset (`DISCARD ALL` after every use) doubled the round trips of a one-query request,
 * and nothing here leaves session state behind (no SET, no session advisory locks, no temporary
 * tables, no LISTEN; transactions always end in COMMIT or ROLLBACK).
 */
export async function openPool(connectionString: string, maximumPoolSize = 10, opts: { preparedStatements?: boolean } = {}): Promise<DatabasePool> {
  const timeouts = { connectionTimeout: 10_000, statementTimeout: 30_000, idleTimeout: 10_000 };
  // The process's connection budget stays `maximumPoolSize` (docs/production.md, "The connection
  // budget"): half for transactions (slonik's pool), half for single statements (at least one each).
  const singleStatementConnections = Math.max(1, Math.floor(maximumPoolSize / 2));
  const transactionConnections = Math.max(1, maximumPoolSize - singleStatementConnections);
  const pool = await createPool(connectionString, {
    // Off unless asked: the embedded database serves every connection from one session, where
    // two connections' statement names would collide (so would a transaction-mode pooler's).
    ...(opts.preparedStatements ? { driverFactory: createPreparedStatementsDriverFactory() } : {}),
    typeParsers,
    resetConnection: async () => {},
    maximumPoolSize: transactionConnections,
    ...timeouts,
  });
  // slonik emits a failed query's error on the pool before throwing it to the caller. With no
  // listener Node's emitter throws it there instead: the same error, except where the error's
  // class comes from another realm (jest's), which it wraps as ERR_UNHANDLED_ERROR, so a caller's
  // `instanceof UniqueIntegrityConstraintViolationError` behaved differently under test. The
  // caller handles the error it is thrown; the emission needs nobody.
  pool.on('error', () => undefined);
  // A single statement outside a transaction skips slonik's per-query machinery (db/pool-single-statements.ts).
  try {
    return await withSingleStatementsOnPg(pool, {
      connectionString, maximumPoolSize: singleStatementConnections, preparedStatements: opts.preparedStatements ?? false, typeParsers,
      connectionTimeoutMs: timeouts.connectionTimeout, statementTimeoutMs: timeouts.statementTimeout, idleTimeoutMs: timeouts.idleTimeout,
    });
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/** Network errors and PostgreSQL's "cannot serve now" states (class 08, and 57P01–57P03: shutdown, crash, starting). */
const unavailableCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03']);

/**
 * Whether an error means the database could not be reached (down, restarting, connection cut),
 * not that a query was wrong: the request may be retried as it is once the database is back.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: string; cause?: unknown; message?: string } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof ConnectionError || e instanceof BackendTerminatedError || unavailableCodes.has(e.code ?? '') || e.code?.startsWith('08')) return true;
    if (/Connection terminated|connection timeout|terminating connection/i.test(e.message ?? '')) return true;
  }
  return false;
}

/** Proves the database answers (the health check). */
export async function pingDatabase(db: CommonQueryMethods): Promise<void> {
  await db.query(sql.unsafe`SELECT 1`);
}

/** The database clock and the number of applied migrations (the worker's system check). */
export async function databaseTime(db: CommonQueryMethods): Promise<{ now: string; migrations: number }> {
  return db.one(sql.type(z.object({ now: z.string(), migrations: z.number() }))`
    SELECT now() AS now, (SELECT count(*) FROM schema_migrations)::int AS migrations`);
}

/** The migrations applied to the database (`schema_migrations`, written by db/migrate.ts), by file name. */
export async function appliedMigrations(db: CommonQueryMethods): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ name: z.string() }))`SELECT name FROM schema_migrations`);
}
