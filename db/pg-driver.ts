import pg from 'pg';
import {
  BackendTerminatedError, BackendTerminatedUnexpectedlyError, CheckExclusionConstraintViolationError, CheckIntegrityConstraintViolationError,
  createDriverFactory, ForeignKeyIntegrityConstraintViolationError, IdleTransactionTimeoutError, InputSyntaxError, InvalidInputError,
  NotNullIntegrityConstraintViolationError, StatementCancelledError, StatementTimeoutError, UniqueIntegrityConstraintViolationError,
  type DriverConfiguration, type DriverFactory, type DriverQueryResult, type DriverTypeParser,
} from 'slonik';

/**
 * A slonik driver over `pg` that sends every statement as a named (prepared) statement: a
 * connection parses and plans a statement's text once, then only binds and executes it. On the
 * hot reads that is most of PostgreSQL's work per request (docs/benchmarks.md; docs/architecture.md).
 *
 * Names are given per statement text, process-wide (`s1`, `s2`, …), up to `maxNamedStatements`
 * texts; any text past that runs unnamed, so a query built with a varying shape (a list of N
 * values) cannot grow a server session's memory without bound: each prepared statement keeps its
 * parse tree and plan in every connection that ran it (about 30 KB for a `SELECT *` of a link).
 * The code has about 130 statement texts, and the hot paths' are among the first a process runs. A plan made stale by a migration that changed a statement's
 * result type ("cached plan must not change result type") is dropped and the statement run again
 * once, when no transaction is open; inside a transaction the error ends that transaction, and
 * the next use re-prepares.
 *
 * Named statements live in a server session: behind a pooler that hands out a different session
 * per transaction (PgBouncer in transaction mode before 1.21) they must be off
 * (DATABASE_PREPARED_STATEMENTS=false), and slonik's own driver is used.
 */
export const maxNamedStatements = 200;

const names = new Map<string, string>();
function nameFor(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < maxNamedStatements) names.set(text, (name = `s${names.size + 1}`));
  return name;
}

/** PostgreSQL's answer when a prepared statement's result columns no longer match its table. */
const stalePlan = (err: unknown) => (err as { code?: string }).code === '0A000' && /cached plan must not change result type/.test((err as Error).message);

export function createPreparedStatementsDriverFactory(): DriverFactory {
  return createDriverFactory(async ({ driverConfiguration }) => {
    const config = clientConfig(driverConfiguration);
    config.types = { getTypeParser: await typeParsersFor(config, driverConfiguration.typeParsers) } as pg.CustomTypesConfig;
    return {
      createPoolClient: async ({ clientEventEmitter }) => {
        const client = new pg.Client(config);
        const onError = (error: Error) => clientEventEmitter.emit('error', wrapError(error, null));
        const onNotice = (notice: { message?: string }) => {
          if (notice.message) clientEventEmitter.emit('notice', { message: notice.message });
        };
        client.on('error', onError);
        client.on('notice', onNotice);
        return {
          connect: async () => {
            await client.connect();
          },
          end: async () => {
            await client.end();
            client.removeListener('error', onError);
            client.removeListener('notice', onNotice);
          },
          query: async (text, values): Promise<DriverQueryResult> => {
            let result: pg.QueryResult;
            try {
              result = await runStatement(client, text, values as unknown[] | undefined, true);
            } catch (err) {
              throw wrapError(err as Error, { sql: text, values: (values ?? []) as unknown as readonly never[] });
            }
            return driverResult(result);
          },
          stream: () => {
            throw new Error('Streams are not used here; open the pool with DATABASE_PREPARED_STATEMENTS=false to stream.');
          },
        };
      },
    };
  });
}

/** A `pg` result as slonik's drivers hand it on (the pool's single statements answer `query` with it too). */
export function driverResult(result: pg.QueryResult): DriverQueryResult {
  return {
    command: result.command as DriverQueryResult['command'],
    fields: result.fields.map((f) => ({ dataTypeId: f.dataTypeID, name: f.name })),
    rowCount: result.rowCount,
    rows: result.rows,
  };
}

/** Per connection: names whose plan went stale inside a transaction, dropped before their next use. */
const staleNames = new WeakMap<pg.Client, Set<string>>();

/**
 * One statement on a `pg` connection: named by its text when `named` (and a name is left), with a
 * stale plan dropped and the statement run again once outside a transaction; past the last name,
 * unnamed in the extended protocol; with names off, as slonik's own driver sends it.
 * The driver above and the pool's single statements (db/pool-single-statements.ts) both run this.
 */
export async function runStatement(client: pg.Client, text: string, values: unknown[] | undefined, named: boolean): Promise<pg.QueryResult> {
  if (!named) return client.query(text, values);
  const name = nameFor(text);
  if (name === undefined) return client.query({ text, values: values as unknown[], queryMode: 'extended' } as pg.QueryConfig);
  let stale = staleNames.get(client);
  if (stale?.delete(name)) await forget(client, name);
  try {
    return await client.query({ name, text, values: values as unknown[] });
  } catch (err) {
    if (!stalePlan(err)) throw err;
    if (client.getTransactionStatus() !== 'I') {
      if (!stale) staleNames.set(client, (stale = new Set()));
      stale.add(name);
      throw err;
    }
    await forget(client, name);
    return client.query({ name, text, values: values as unknown[] });
  }
}

async function forget(client: pg.Client, name: string): Promise<void> {
  delete (client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements[name];
  await client.query(`DEALLOCATE ${name}`).catch(() => undefined);
}

export type ClientConfig = pg.ClientConfig & { statement_timeout?: number; idle_in_transaction_session_timeout?: number };

export function clientConfig(c: DriverConfiguration): ClientConfig {
  const timeout = (v: 'DISABLE_TIMEOUT' | number | undefined) => (v === undefined || v === 'DISABLE_TIMEOUT' ? undefined : Math.max(1, v));
  const config: ClientConfig = { connectionString: c.connectionUri };
  if (c.ssl) config.ssl = c.ssl;
  const connect = timeout(c.connectionTimeout);
  const statement = timeout(c.statementTimeout);
  const idleInTransaction = timeout(c.idleInTransactionSessionTimeout);
  if (connect !== undefined) config.connectionTimeoutMillis = connect;
  if (statement !== undefined) config.statement_timeout = statement;
  if (idleInTransaction !== undefined) config.idle_in_transaction_session_timeout = idleInTransaction;
  return config;
}

/** pg-types' array parser as it is at run time (its typings describe a later version's). */
const arrays = pg.types.arrayParser as unknown as { create(source: string, parse: (value: string) => unknown): { parse(): unknown[] } };

/** The configured parsers by type OID (and their arrays'), read once from pg_type; pg's own for the rest. */
export async function typeParsersFor(config: ClientConfig, parsers: ReadonlyArray<Pick<DriverTypeParser, 'name' | 'parse'>>): Promise<(oid: number) => (value: string) => unknown> {
  const client = new pg.Client(config);
  await client.connect();
  let rows: { oid: number; typarray: number; typname: string }[];
  try {
    rows = (await client.query('SELECT oid::int, typarray::int, typname FROM pg_type WHERE typname = ANY($1::text[])', [parsers.map((p) => p.name)])).rows;
  } finally {
    await client.end();
  }
  const byOid = new Map<number, (value: string) => unknown>();
  for (const parser of parsers) {
    const type = rows.find((r) => r.typname === parser.name);
    if (!type) throw new Error(`Database type "${parser.name}" not found.`);
    byOid.set(type.oid, (value) => parser.parse(value));
    if (type.typarray) byOid.set(type.typarray, (value) => arrays.create(value, parser.parse).parse());
  }
  return (oid) => byOid.get(oid) ?? (pg.types.getTypeParser(oid) as (value: string) => unknown);
}

type QueryRef = { sql: string; values: readonly never[] };

/** pg's errors as slonik's, by SQLSTATE, so callers catch the same classes whichever driver runs. */
export function wrapError(error: Error, query: QueryRef | null): Error {
  const message = error.message.toLowerCase();
  if (message.includes('connection terminated unexpectedly')) return new BackendTerminatedUnexpectedlyError(error);
  if (message.includes('connection terminated')) return new BackendTerminatedError(error);
  const code = (error as { code?: string }).code;
  const e = error as never;
  switch (code) {
    case '22P02': return new InvalidInputError(error.message);
    case '25P03': return new IdleTransactionTimeoutError(e);
    case '57P01': return new BackendTerminatedError(e);
    case '57014': return /canceling statement due to user request/.test(error.message) ? new StatementCancelledError(e) : new StatementTimeoutError(e);
    case '23502': return new NotNullIntegrityConstraintViolationError(e);
    case '23503': return new ForeignKeyIntegrityConstraintViolationError(e);
    case '23505': return new UniqueIntegrityConstraintViolationError(e);
    case '23P01': return new CheckExclusionConstraintViolationError(e);
    case '23514': return new CheckIntegrityConstraintViolationError(e);
    case '42601': return query ? new InputSyntaxError(e, query as never) : error;
    default: return error;
  }
}
