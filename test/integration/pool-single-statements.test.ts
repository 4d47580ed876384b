import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import pg from 'pg';
import {
  DataIntegrityError, NotFoundError, sql, UnexpectedStateError, UniqueIntegrityConstraintViolationError, type DatabasePool,
} from 'slonik';
import { z } from 'zod';
import { isDatabaseUnavailable, openPool } from '../../db/pool.js';
import { createTestDatabase } from '../helpers/database.js';

/**
 * The pool's single statements (db/pool-single-statements.ts) skip slonik's per-query machinery.
 * Against real PostgreSQL: they answer exactly what slonik's own path answers (a statement inside
 * `transaction`, which is still slonik's), with its error classes and row-count rules, its retry
 * of a serialization failure, the transaction's isolation, and an `end` that closes both pools.
 */
let db: { url: string; drop: () => Promise<void> };
let prepared: DatabasePool;
let plain: DatabasePool;
let observer: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  prepared = await openPool(db.url, 2, { preparedStatements: true });
  plain = await openPool(db.url, 2);
  await plain.query(sql.unsafe`CREATE TABLE single_rows (id int PRIMARY KEY, note text, amount numeric)`);
  await plain.query(sql.unsafe`INSERT INTO single_rows VALUES (1, 'one', 1.50), (2, 'two', 0.000000000000000001)`);
  observer = new pg.Client({ connectionString: db.url });
  await observer.connect();
});
afterAll(async () => {
  await observer?.end();
  await prepared?.end();
  await plain?.end();
  await db?.drop();
});

const values = sql.unsafe`
  SELECT 12345678901::int8 AS big, '0.000000000000000001'::numeric AS amount, ${'2026-11-24T10:00:00.5Z'}::timestamptz AS at,
         '2026-11-24 10:00:00'::timestamp AS local, ARRAY['2026-01-01T00:00:00Z'::timestamptz] AS ats,
         ARRAY['1.50'::numeric] AS amounts, true AS yes, NULL::text AS nothing, '{"a":1}'::jsonb AS doc, ${sql.array([3, 4], 'int4')} AS list`;

describe.each([['named statements', () => prepared], ['slonik’s own driver', () => plain]])('with %s', (_name, pool) => {
  it('answers every method exactly as slonik’s path inside a transaction does', async () => {
    const p = pool();
    const all = sql.type(z.object({ id: z.number(), note: z.string(), amount: z.string() }))`SELECT * FROM single_rows ORDER BY id`;
    const ids = sql.type(z.object({ id: z.number() }))`SELECT id FROM single_rows ORDER BY id`;
    const one = sql.unsafe`SELECT note FROM single_rows WHERE id = ${2}`;
    const direct = {
      values: await p.one(values), any: await p.any(all), anyFirst: await p.anyFirst(ids), many: await p.many(all), manyFirst: await p.manyFirst(ids),
      maybeOne: await p.maybeOne(one), maybeOneFirst: await p.maybeOneFirst(one), oneFirst: await p.oneFirst(one),
    };
    const viaSlonik = await p.transaction(async (t) => ({
      values: await t.one(values), any: await t.any(all), anyFirst: await t.anyFirst(ids), many: await t.many(all), manyFirst: await t.manyFirst(ids),
      maybeOne: await t.maybeOne(one), maybeOneFirst: await t.maybeOneFirst(one), oneFirst: await t.oneFirst(one),
    }));
    expect(direct).toEqual(viaSlonik);
    expect(direct.values).toEqual({
      big: BigInt(12345678901), amount: '0.000000000000000001', at: '2026-11-24T10:00:00.500Z', local: '2026-11-24T10:00:00.000Z',
      ats: ['2026-01-01T00:00:00.000Z'], amounts: ['1.50'], yes: true, nothing: null, doc: { a: 1 }, list: [3, 4],
    });
    expect(direct.any).toEqual([{ id: 1, note: 'one', amount: '1.50' }, { id: 2, note: 'two', amount: '0.000000000000000001' }]);
    const written = await p.query(sql.unsafe`UPDATE single_rows SET note = note WHERE id > ${0}`);
    expect(written).toMatchObject({ command: 'UPDATE', rowCount: 2, rows: [], type: 'QueryResult' });
  });

  it('keeps slonik’s row-count rules and error classes', async () => {
    const p = pool();
    const none = sql.unsafe`SELECT id FROM single_rows WHERE id = ${99}`;
    const two = sql.unsafe`SELECT id FROM single_rows`;
    const twoColumns = sql.unsafe`SELECT id, note FROM single_rows WHERE id = ${1}`;
    await expect(p.one(none)).rejects.toBeInstanceOf(NotFoundError);
    await expect(p.oneFirst(none)).rejects.toBeInstanceOf(NotFoundError);
    await expect(p.many(none)).rejects.toBeInstanceOf(NotFoundError);
    await expect(p.manyFirst(none)).rejects.toBeInstanceOf(NotFoundError);
    expect(await p.maybeOne(none)).toBeNull();
    expect(await p.maybeOneFirst(none)).toBeNull();
    expect(await p.any(none)).toEqual([]);
    await expect(p.one(two)).rejects.toBeInstanceOf(DataIntegrityError);
    await expect(p.maybeOne(two)).rejects.toBeInstanceOf(DataIntegrityError);
    await expect(p.oneFirst(twoColumns)).rejects.toBeInstanceOf(DataIntegrityError);
    await expect(p.anyFirst(twoColumns)).rejects.toBeInstanceOf(DataIntegrityError);
    const duplicate = p.query(sql.unsafe`INSERT INTO single_rows VALUES (${1}, 'again', 0)`);
    await expect(duplicate).rejects.toBeInstanceOf(UniqueIntegrityConstraintViolationError);
    await expect(duplicate).rejects.toMatchObject({ constraint: 'single_rows_pkey' });
    // A failed statement leaves the pool usable.
    expect(await p.oneFirst(sql.unsafe`SELECT note FROM single_rows WHERE id = ${1}`)).toBe('one');
  });
});

it('runs a statement again after a serialization failure, as slonik does (class 40, up to 5 times)', async () => {
  await plain.query(sql.unsafe`CREATE SEQUENCE flaky_calls`);
  await plain.query(sql.unsafe`
    CREATE FUNCTION flaky(fail_times int) RETURNS int LANGUAGE plpgsql AS $$
    DECLARE n int := nextval('flaky_calls');
    BEGIN
      IF n <= fail_times THEN RAISE EXCEPTION 'conflict %', n USING ERRCODE = '40001'; END IF;
      RETURN n;
    END $$`);
  expect(await prepared.oneFirst(sql.unsafe`SELECT flaky(${3})`)).toBe(4);
  await plain.query(sql.unsafe`SELECT setval('flaky_calls', 1, false)`);
  // Six failures in a row: the first try and five more, then the error is the caller's.
  await expect(prepared.oneFirst(sql.unsafe`SELECT flaky(${6})`)).rejects.toMatchObject({ code: '40001' });
  expect(await plain.oneFirst(sql.unsafe`SELECT last_value FROM flaky_calls`)).toBe(BigInt(6));
});

it('a single statement never sees a transaction’s uncommitted rows, and the transaction’s statements run inside it', async () => {
  let seenOutside: unknown = 'unread';
  await prepared.transaction(async (t) => {
    await t.query(sql.unsafe`INSERT INTO single_rows VALUES (${50}, 'pending', 0)`);
    expect(await t.oneFirst(sql.unsafe`SELECT note FROM single_rows WHERE id = ${50}`)).toBe('pending');
    seenOutside = await prepared.maybeOneFirst(sql.unsafe`SELECT note FROM single_rows WHERE id = ${50}`);
    throw new Error('roll back');
  }).catch(() => undefined);
  expect(seenOutside).toBeNull();
  expect(await prepared.maybeOne(sql.unsafe`SELECT id FROM single_rows WHERE id = ${50}`)).toBeNull();
});

it('keeps the process within its pool size, and ends both pools: no connection stays open, a statement after the end is refused', async () => {
  const pool = await openPool(db.url, 3, { preparedStatements: true });
  const mine = async () => Number((await observer.query(
    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'")).rows[0].count);
  const before = await mine();
  // Six single statements and three transactions at once, each holding its connection a while.
  const busy = Promise.all([
    ...[1, 2, 3, 4, 5, 6].map((i) => pool.oneFirst(sql.unsafe`SELECT ${i}::int AS n FROM pg_sleep(0.3)`)),
    ...[1, 2, 3].map(() => pool.transaction((t) => t.query(sql.unsafe`SELECT pg_sleep(0.3)`))),
  ]);
  let most = 0;
  for (let i = 0; i < 20; i++) {
    most = Math.max(most, (await mine()) - before);
    await new Promise((r) => setTimeout(r, 50));
  }
  await busy;
  // One connection for single statements, two for transactions: the pool's 3.
  expect(most).toBe(3);
  await pool.end();
  for (let i = 0; i < 50 && (await mine()) > before; i++) await new Promise((r) => setTimeout(r, 20));
  expect(await mine()).toBe(before);
  await expect(pool.one(sql.unsafe`SELECT 1`)).rejects.toBeInstanceOf(UnexpectedStateError);
});

it('a database gone after the pool opened is a database unavailable, not a wrong query', async () => {
  // A TCP relay to PostgreSQL that is shut after the pool has opened (the server stopped).
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((socket) => {
    const upstream = net.connect(5432, '127.0.0.1');
    for (const s of [socket, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
    }
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const port = (relay.address() as net.AddressInfo).port;
  const pool = await openPool(db.url.replace(/@[^/]+\//, `@127.0.0.1:${port}/`), 1);
  try {
    expect(await pool.oneFirst(sql.unsafe`SELECT 1`)).toBe(1);
    await new Promise<void>((resolve) => {
      relay.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
    const err = await pool.one(sql.unsafe`SELECT 1`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(isDatabaseUnavailable(err)).toBe(true);
  } finally {
    await pool.end();
  }
});
