import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ForeignKeyIntegrityConstraintViolationError, InputSyntaxError, NotNullIntegrityConstraintViolationError, sql, StatementTimeoutError,
  UniqueIntegrityConstraintViolationError, type DatabasePool,
} from 'slonik';
import { z } from 'zod';
import { maxNamedStatements } from '../../db/pg-driver.js';
import { openPool } from '../../db/pool.js';
import { createTestDatabase } from '../helpers/database.js';

/**
 * The pool's prepared-statements driver (db/pg-driver.ts) against real PostgreSQL: statements are
 * prepared once per connection, values come back exactly as with slonik's own driver, errors are
 * slonik's classes, and a plan made stale by a migration does not fail the next call.
 */
let db: { url: string; drop: () => Promise<void> };
let prepared: DatabasePool;
let plain: DatabasePool;

beforeAll(async () => {
  db = await createTestDatabase();
  prepared = await openPool(db.url, 1, { preparedStatements: true });
  plain = await openPool(db.url, 1);
  await plain.query(sql.unsafe`CREATE TABLE driver_parent (id int PRIMARY KEY)`);
  await plain.query(sql.unsafe`CREATE TABLE driver_child (id int PRIMARY KEY, parent int NOT NULL REFERENCES driver_parent, note text)`);
  await plain.query(sql.unsafe`INSERT INTO driver_parent VALUES (1)`);
});
afterAll(async () => {
  await prepared?.end();
  await plain?.end();
  await db?.drop();
});

const preparedTexts = (pool: DatabasePool) =>
  pool.anyFirst(sql.type(z.object({ statement: z.string() }))`SELECT statement FROM pg_prepared_statements`);

describe('named statements', () => {
  it('prepares a statement once per connection and reuses it', async () => {
    const find = sql.type(z.object({ id: z.number() }))`SELECT id FROM driver_parent WHERE id = ${1}`;
    expect(await prepared.one(find)).toEqual({ id: 1 });
    expect(await prepared.one(find)).toEqual({ id: 1 });
    const texts = await preparedTexts(prepared);
    expect(texts.filter((t) => t === 'SELECT id FROM driver_parent WHERE id = $1')).toHaveLength(1);
    // slonik's own driver prepares nothing (the setting's "false").
    expect(await preparedTexts(plain)).toEqual([]);
  });

  it('parses values exactly as slonik’s own driver does', async () => {
    const query = sql.unsafe`
      SELECT 12345678901::int8 AS big, '0.000000000000000001'::numeric AS amount, ${'2026-11-24T10:00:00.5Z'}::timestamptz AS at,
             '2026-11-24 10:00:00'::timestamp AS local, ARRAY['2026-01-01T00:00:00Z'::timestamptz] AS ats,
             ARRAY['1.50'::numeric] AS amounts, true AS yes, NULL::text AS nothing, '{"a":1}'::jsonb AS doc`;
    // Inside a transaction: slonik's path through each driver (a single statement skips it, db/pool-single-statements.ts).
    const [a, b] = [await prepared.transaction((t) => t.one(query)), await plain.transaction((t) => t.one(query))];
    expect(a).toEqual(b);
    expect(a).toEqual({
      big: BigInt(12345678901), amount: '0.000000000000000001', at: '2026-11-24T10:00:00.500Z', local: '2026-11-24T10:00:00.000Z',
      ats: ['2026-01-01T00:00:00.000Z'], amounts: ['1.50'], yes: true, nothing: null, doc: { a: 1 },
    });
  });

  it('raises slonik’s error classes, and a failed statement inside a transaction rolls it back', async () => {
    await expect(prepared.query(sql.unsafe`INSERT INTO driver_parent VALUES (${1})`)).rejects.toBeInstanceOf(UniqueIntegrityConstraintViolationError);
    await expect(prepared.query(sql.unsafe`INSERT INTO driver_child VALUES (${1}, ${99}, NULL)`)).rejects.toBeInstanceOf(ForeignKeyIntegrityConstraintViolationError);
    await expect(prepared.query(sql.unsafe`INSERT INTO driver_child (id, parent) VALUES (${2}, NULL)`)).rejects.toBeInstanceOf(NotNullIntegrityConstraintViolationError);
    await expect(prepared.query(sql.unsafe`SELEC 1`)).rejects.toBeInstanceOf(InputSyntaxError);
    await expect(prepared.transaction(async (tx) => {
      await tx.query(sql.unsafe`SET LOCAL statement_timeout = 50`);
      await tx.query(sql.unsafe`SELECT pg_sleep(1)`);
    })).rejects.toBeInstanceOf(StatementTimeoutError);
    await expect(prepared.transaction(async (tx) => {
      await tx.query(sql.unsafe`INSERT INTO driver_parent VALUES (${2})`);
      await tx.query(sql.unsafe`INSERT INTO driver_parent VALUES (${2})`);
    })).rejects.toBeInstanceOf(UniqueIntegrityConstraintViolationError);
    expect(await prepared.anyFirst(sql.type(z.object({ id: z.number() }))`SELECT id FROM driver_parent ORDER BY id`)).toEqual([1]);
    // slonik's own driver through openPool, the same (the error is the caller's, as in production).
    await expect(plain.query(sql.unsafe`INSERT INTO driver_parent VALUES (${1})`)).rejects.toBeInstanceOf(UniqueIntegrityConstraintViolationError);
  });
});

describe('a migration while statements are prepared', () => {
  it('answers the next call with the new columns instead of failing on the stale plan', async () => {
    const all = sql.unsafe`SELECT * FROM driver_child WHERE parent = ${1} ORDER BY id`;
    await plain.query(sql.unsafe`INSERT INTO driver_child VALUES (10, 1, 'first')`);
    expect(await prepared.any(all)).toEqual([{ id: 10, parent: 1, note: 'first' }]);
    await plain.query(sql.unsafe`ALTER TABLE driver_child ADD COLUMN state text NOT NULL DEFAULT 'open'`);
    expect(await prepared.any(all)).toEqual([{ id: 10, parent: 1, note: 'first', state: 'open' }]);
  });

  it('inside a transaction, fails that transaction only; the next use prepares again', async () => {
    const all = sql.unsafe`SELECT * FROM driver_child WHERE id = ${10}`;
    // Prepared on the connection transactions use (a statement outside one has a pool of its own).
    expect(await prepared.transaction((tx) => tx.one(all))).toMatchObject({ id: 10 });
    await plain.query(sql.unsafe`ALTER TABLE driver_child ADD COLUMN seen boolean NOT NULL DEFAULT false`);
    await expect(prepared.transaction((tx) => tx.one(all))).rejects.toThrow(/cached plan must not change result type/);
    expect(await prepared.transaction((tx) => tx.one(all))).toMatchObject({ id: 10, seen: false });
  });
});

it(`names at most ${maxNamedStatements} statement texts; past that, statements run unnamed`, async () => {
  // Each column name makes another statement text.
  const numbered = (i: number) => sql.unsafe`SELECT ${i}::int AS ${sql.identifier([`n${i}`])}`;
  for (let i = 0; i <= maxNamedStatements; i++) await prepared.query(numbered(i));
  expect((await preparedTexts(prepared)).length).toBeLessThanOrEqual(maxNamedStatements);
  expect(await prepared.oneFirst(numbered(maxNamedStatements + 7))).toBe(maxNamedStatements + 7);
});
