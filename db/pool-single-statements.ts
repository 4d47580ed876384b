import pg from 'pg';
import {
  ConnectionError, DataIntegrityError, NotFoundError, UnexpectedStateError,
  type DatabasePool, type QueryResult, type QueryResultRow, type QuerySqlToken,
} from 'slonik';
import { clientConfig, driverResult, runStatement, typeParsersFor, wrapError, type ClientConfig } from './pg-driver.js';

/**
 * The pool's single statements (`any`, `one`, `maybeOne`, … and `query`, outside a transaction),
 * sent straight through a `pg.Pool` of their own; transactions, `connect`, `exists` and `stream`
 * stay slonik's. One statement on the pool is most of what the API's reads do, and slonik's
 * machinery around it (a pool connection bound and released through its connection routine, its
 * interceptor chain, the error race, a query id, a child logger, two OpenTelemetry spans) cost
 * the serving process as much CPU as PostgreSQL's answer itself (docs/benchmarks.md, "Reads").
 *
 * What a caller sees is slonik's, statement for statement: the same SQL text (slonik's `$slonik_N`
 * placeholders as `$N`), the same named (prepared) statements when they are on, the same type
 * parsers (money stays a string), the same error classes (pg's errors wrapped by SQLSTATE as the
 * driver wraps them; `NotFoundError` and `DataIntegrityError` for a count that does not fit; a
 * connection that cannot be opened is a `ConnectionError`), the same retry of a statement that
 * failed with a serialization failure or a deadlock (class 40, up to `queryRetryLimit` times), and a
 * connection dropped after any error. A statement inside `pool.transaction(...)` runs on the
 * transaction's connection, as before: this path never sees it.
 */
export interface SingleStatementOptions {
  connectionString: string;
  maximumPoolSize: number;
  preparedStatements: boolean;
  connectionTimeoutMs: number;
  statementTimeoutMs: number;
  idleTimeoutMs: number;
  typeParsers: ReadonlyArray<{ name: string; parse: (value: string) => unknown }>;
}

/** slonik's own default (queryRetryLimit): a statement failing with class 40 is run again up to this many times. */
const retryLimit = 5;

type Token = QuerySqlToken;

export async function withSingleStatementsOnPg(pool: DatabasePool, o: SingleStatementOptions): Promise<DatabasePool> {
  const config: ClientConfig = clientConfig({
    connectionUri: o.connectionString,
    connectionTimeout: o.connectionTimeoutMs,
    statementTimeout: o.statementTimeoutMs,
    idleInTransactionSessionTimeout: 'DISABLE_TIMEOUT',
  } as never);
  // The type parsers' OIDs are read from the database once, here, as slonik's driver reads them
  // when the pool opens (not on a first statement, which would then cost two).
  config.types = { getTypeParser: await typeParsersFor(config, o.typeParsers) } as pg.CustomTypesConfig;
  const direct = new pg.Pool({ ...config, max: o.maximumPoolSize, idleTimeoutMillis: o.idleTimeoutMs });
  // A connection that dies (the server restarted) is emitted as an error: by the pool while it
  // is idle (pg drops it), by the client while it is checked out. The statement it was running
  // fails with that error and the client is dropped on release; with no listener, the emission
  // itself would throw out of the socket's callback and end the process.
  direct.on('error', () => undefined);
  direct.on('connect', (client) => client.on('error', () => undefined));
  let ended = false;

  const run = async (query: Token): Promise<pg.QueryResult> => {
    if (ended) throw new UnexpectedStateError('Connection pool has been shut down. Cannot create a new connection.');
    const text = query.sql.replaceAll('$slonik_', '$');
    const values = query.values as unknown[];
    let client: pg.PoolClient;
    try {
      client = await direct.connect();
      if (ended) {
        client.release();
        throw new UnexpectedStateError('Connection pool has been shut down. Cannot create a new connection.');
      }
    } catch (err) {
      if (err instanceof UnexpectedStateError) throw err;
      throw new ConnectionError((err as Error).message, { cause: err as Error });
    }
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await runStatement(client, text, values, o.preparedStatements);
        client.release();
        return result;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (typeof code === 'string' && code.startsWith('40') && attempt < retryLimit) continue;
        client.release(err as Error);
        throw wrapError(err as Error, { sql: text, values: values as never });
      }
    }
  };
  const rows = async <T>(q: Token): Promise<T[]> => (await run(q)).rows as T[];
  const first = <T>(q: Token, row: QueryResultRow): T => {
    const keys = Object.keys(row);
    if (keys.length !== 1) throw new DataIntegrityError(q);
    return row[keys[0]!] as T;
  };
  const atMostOne = async <T>(q: Token): Promise<T | null> => {
    const r = await rows<T>(q);
    if (r.length > 1) throw new DataIntegrityError(q);
    return r[0] ?? null;
  };
  const exactlyOne = async <T>(q: Token): Promise<T> => {
    const r = await atMostOne<T>(q);
    if (r === null) throw new NotFoundError(q);
    return r;
  };
  const atLeastOne = async <T>(q: Token): Promise<T[]> => {
    const r = await rows<T>(q);
    if (r.length === 0) throw new NotFoundError(q);
    return r;
  };

  const methods = {
    any: (q: Token) => rows(q),
    anyFirst: async (q: Token) => (await rows<QueryResultRow>(q)).map((r) => first(q, r)),
    many: (q: Token) => atLeastOne(q),
    manyFirst: async (q: Token) => (await atLeastOne<QueryResultRow>(q)).map((r) => first(q, r)),
    maybeOne: (q: Token) => atMostOne(q),
    maybeOneFirst: async (q: Token) => {
      const r = await atMostOne<QueryResultRow>(q);
      return r === null ? null : first(q, r);
    },
    one: (q: Token) => exactlyOne(q),
    oneFirst: async (q: Token) => first(q, await exactlyOne<QueryResultRow>(q)),
    query: async (q: Token): Promise<QueryResult<QueryResultRow>> => {
      const r = driverResult(await run(q));
      return { ...r, notices: [], rowCount: r.rowCount ?? 0, type: 'QueryResult' } as QueryResult<QueryResultRow>;
    },
  };
  const slonikEnd = pool.end.bind(pool);
  // slonik's pool object is a plain object (its prototype the pool's event emitter): its own
  // methods are replaced, so every `pool.on(...)`, `transaction` and `connect` stays slonik's.
  Object.assign(pool, methods, {
    end: async () => {
      ended = true;
      await Promise.all([slonikEnd(), direct.end()]);
    },
  });
  return pool;
}
