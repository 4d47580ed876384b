import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { openPool } from '../../db/pool.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { gapFillsSettled } from '../../services/wallets/derived-addresses.js';
import { deriveReceiveWallet } from '../../services/wallets/derived-wallets.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';
import { StatementCounter } from '../helpers/pg-statement-counter.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Derives of one store that arrive while its record statement runs are recorded together by the
 * next one (services/wallets/derive-batches.ts), counted on the wire: each still answers only
 * after its own index is recorded for the watcher, with the keys registered now.
 */
let stack: Stack;
let counter: StatementCounter;
let pool: DatabasePool;

beforeAll(async () => {
  stack = await startStack();
  counter = await StatementCounter.start();
  pool = await openPool(counter.urlFor(stack.config.databaseUrl!), 4, { preparedStatements: true });
});
afterAll(async () => {
  await gapFillsSettled();
  await pool?.end();
  await counter?.close();
  await stack?.stop();
});

async function storeWithKeys(name: string) {
  const store: CreatedStore = await stack.createStore(name);
  const xpubs = randomAccountXpubs();
  for (const [kind, xpub] of [['tron', xpubs.tron], ['evm', xpubs.evm]] as const) {
    const res = await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/${kind}`, key: store.keys.test.secretKey, payload: { xpub } });
    expect(res.status).toBe(200);
  }
  return { scope: { storeId: store.clientId, environment: 'test' as const }, xpubs };
}

const handedOut = (storeId: string) => stack.pool.any(sql.type(z.object({ family: z.string(), public_key: z.string(), derived_index: z.number(), address: z.string() }))`
  SELECT family, public_key, derived_index, address FROM derived_addresses WHERE store_id = ${storeId} AND handed_out ORDER BY derived_index, family`);
const highest = (storeId: string) => stack.pool.oneFirst(sql.type(z.object({ highest_index: z.number() }))`
  SELECT highest_index FROM derived_index_marks WHERE store_id = ${storeId} AND environment = 'test'`);
const records = (statements: string[]) => statements.filter((s) => /^WITH now_keys AS/.test(s.trim()));

it('records twenty derives made at once in two statements, each index watched, the highest the greatest', async () => {
  const { scope, xpubs } = await storeWithKeys('Derive burst');
  await deriveReceiveWallet(pool, scope, 0); // the keys are known to this process from here on
  await gapFillsSettled();
  const indexes = Array.from({ length: 20 }, (_, i) => 100 + i * 7);
  let answers: Awaited<ReturnType<typeof deriveReceiveWallet>>[] = [];
  const statements = await counter.during(async () => {
    answers = await Promise.all(indexes.map((index) => deriveReceiveWallet(pool, scope, index)));
  });
  // The first derive's statement, then one for the nineteen that arrived while it ran.
  expect(records(statements)).toHaveLength(2);
  expect(answers.map((a) => [a.index, a.tron, a.bsc])).toEqual(indexes.map((i) => [i, deriveAddress(xpubs.tron, 'tron', 0, i), deriveAddress(xpubs.evm, 'evm', 0, i)]));
  const rows = await handedOut(scope.storeId);
  for (const i of [0, ...indexes]) {
    expect(rows.filter((r) => r.derived_index === i).map((r) => [r.family, r.public_key, r.address])).toEqual([
      ['evm', xpubs.evm, deriveAddress(xpubs.evm, 'evm', 0, i)],
      ['tron', xpubs.tron, deriveAddress(xpubs.tron, 'tron', 0, i)],
    ]);
  }
  expect(rows).toHaveLength(2 * (indexes.length + 1));
  expect(await highest(scope.storeId)).toBe(Math.max(...indexes));
  await gapFillsSettled();
});

const writtenBy = (storeId: string, index: number) => stack.pool.anyFirst(sql.type(z.object({ xid: z.string() }))`
  SELECT created_xid::text AS xid FROM derived_addresses WHERE store_id = ${storeId} AND derived_index = ${index} ORDER BY family`);

it('records one index asked for many times at once once, and a repeat of it writes nothing', async () => {
  const { scope } = await storeWithKeys('Derive same index');
  await deriveReceiveWallet(pool, scope, 0);
  const answers = await Promise.all(Array.from({ length: 10 }, () => deriveReceiveWallet(pool, scope, 5)));
  expect(new Set(answers.map((a) => a.bsc)).size).toBe(1);
  expect((await handedOut(scope.storeId)).filter((r) => r.derived_index === 5)).toHaveLength(2);
  const written = await writtenBy(scope.storeId, 5);
  await Promise.all(Array.from({ length: 5 }, () => deriveReceiveWallet(pool, scope, 5)));
  expect(await writtenBy(scope.storeId, 5)).toEqual(written);
  await gapFillsSettled();
});

it('takes at most 100 derives a statement: 120 at once in three, every one recorded, in falling order too', async () => {
  const { scope } = await storeWithKeys('Derive big burst');
  await deriveReceiveWallet(pool, scope, 0);
  await gapFillsSettled();
  const indexes = Array.from({ length: 120 }, (_, i) => 500 - i); // falling: rows are still written in one order
  const statements = await counter.during(async () => {
    await Promise.all(indexes.map((index) => deriveReceiveWallet(pool, scope, index)));
  });
  expect(records(statements)).toHaveLength(3);
  const rows = await handedOut(scope.storeId);
  for (const i of indexes) expect(rows.filter((r) => r.derived_index === i)).toHaveLength(2);
  expect(await highest(scope.storeId)).toBe(500);
  await gapFillsSettled();
});

it('fails every derive of a statement that fails, answers none of them, and the store’s next derive gets a statement of its own', async () => {
  const { scope } = await storeWithKeys('Derive failing statement');
  await deriveReceiveWallet(pool, scope, 0);
  await gapFillsSettled();
  // PostgreSQL refuses this store's derived rows for a while (a real failure, not a stand-in).
  const fn = `refuse_${scope.storeId.replace(/[^a-z0-9]/gi, '_')}`;
  await stack.pool.query(sql.unsafe`CREATE FUNCTION ${sql.identifier([fn])}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.store_id = ${sql.literalValue(scope.storeId)} THEN RAISE EXCEPTION 'refused for the test'; END IF; RETURN NEW; END $$`);
  await stack.pool.query(sql.unsafe`CREATE TRIGGER ${sql.identifier([fn])} BEFORE INSERT OR UPDATE ON derived_addresses FOR EACH ROW EXECUTE FUNCTION ${sql.identifier([fn])}()`);
  try {
    const outcomes = await Promise.allSettled([60, 61, 62, 63, 64].map((index) => deriveReceiveWallet(pool, scope, index)));
    expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('rejected'));
    expect((await handedOut(scope.storeId)).filter((r) => r.derived_index >= 60)).toEqual([]);
  } finally {
    await stack.pool.query(sql.unsafe`DROP TRIGGER ${sql.identifier([fn])} ON derived_addresses`);
    await stack.pool.query(sql.unsafe`DROP FUNCTION ${sql.identifier([fn])}()`);
  }
  const statements = await counter.during(async () => {
    expect((await deriveReceiveWallet(pool, scope, 65)).index).toBe(65);
  });
  expect(records(statements)).toHaveLength(1);
  expect((await handedOut(scope.storeId)).filter((r) => r.derived_index === 65)).toHaveLength(2);
  await gapFillsSettled();
});

it('answers a burst made from a key rolled meanwhile with the key registered now, and records none under the old one', async () => {
  const { scope, xpubs } = await storeWithKeys('Derive rolled key');
  await deriveReceiveWallet(pool, scope, 0); // this process now remembers the first EVM key
  await gapFillsSettled();
  const rolled = randomAccountXpubs().evm;
  // Another process rolls the key (the write the wallets route makes); this one has not heard of it.
  await stack.pool.query(sql.unsafe`UPDATE store_wallets SET public_key = ${rolled} WHERE store_id = ${scope.storeId} AND environment = 'test' AND kind = 'evm'`);
  const indexes = [40, 41, 42, 43, 44];
  const answers = await Promise.all(indexes.map((index) => deriveReceiveWallet(pool, scope, index)));
  expect(answers.map((a) => a.bsc)).toEqual(indexes.map((i) => deriveAddress(rolled, 'evm', 0, i)));
  const rows = (await handedOut(scope.storeId)).filter((r) => indexes.includes(r.derived_index));
  expect(rows.filter((r) => r.family === 'evm').map((r) => r.public_key)).toEqual(indexes.map(() => rolled));
  expect(rows.some((r) => r.public_key === xpubs.evm)).toBe(false);
  await gapFillsSettled();
});
