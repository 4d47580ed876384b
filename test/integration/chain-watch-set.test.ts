import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { sql } from 'slonik';
import { getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { z } from 'zod';
import { createChainActivities } from '../../activities/chains/index.js';
import { WatchSet } from '../../rails/chain/watch-set.js';
import { backfillLegacyDerivedAddresses, gapFillsSettled } from '../../services/wallets/derived-addresses.js';
import type { CreatedStore } from '../../db/store-repo.js';
import type { Environment } from '../../domain/environment.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { connectAllRails, randomAccountXpubs } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { refreshInChild } from '../helpers/watch-set-child.js';

/**
 * What the chain watchers' in-memory watch set holds, and when: rows committed in any order are
 * all found, and receive addresses handed out by derive cost what was handed out, whatever the
 * index. Ticks are the real activity (scan, settle, signal) against anvil playing BSC, called
 * directly so the test decides when each one runs.
 */
let anvil: Anvil;
let usdt: TestToken;
let stack: Stack;
let payer: Address;
let chains: ReturnType<typeof createChainActivities>;

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  payer = anvil.accounts[1]!;
  await usdt.mint(payer, 10n ** 30n);
  stack = await startStack({ RPC_URL_USDT_BSC_TEST: anvil.url, USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CONFIRMATIONS_USDT_BSC: '1' });
  chains = createChainActivities({ pool: stack.pool, config: stack.config, temporal: stack.temporal });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await anvil?.stop();
});

const usdt18 = (n: bigint) => n * 10n ** 18n;
const tick = () => chains.scanChainTick({ rail: 'USDT_BSC', environment: 'test', cursor: null });
const freshAddress = () => privateKeyToAddress(generatePrivateKey());

const depositRow = z.object({ owner_id: z.string(), tx_hash: z.string(), derived_index: z.number().nullable() });
const depositsOf = async (ownerId: string) =>
  stack.pool.any(sql.type(depositRow)`SELECT owner_id, tx_hash, derived_index FROM chain_deposits WHERE owner_id = ${ownerId}`);

/** A transaction on its own connection that inserts a link's watched row and stays open until told. */
async function openWatchInsert(store: CreatedStore, linkId: string, address: string) {
  const client = new pg.Client({ connectionString: stack.config.databaseUrl });
  await client.connect();
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
     VALUES ('evm', 'test', $1, 'payment_link', $2, $3, now() + interval '1 hour')`,
    [address.toLowerCase(), linkId, store.clientId],
  );
  return {
    async commit() {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

describe('watched rows committed out of order', () => {
  it('finds a payment to an address whose row committed after a later row and after a tick', async () => {
    const store = await stack.createStore('Commit order');
    const [addressA, addressB] = [freshAddress(), freshAddress()];
    // A takes the lower sequence number but commits last, after a tick has already loaded B.
    const t1 = await openWatchInsert(store, 'pl_commit_order_a', addressA);
    const t2 = await openWatchInsert(store, 'pl_commit_order_b', addressB);
    await t2.commit();
    await anvil.rpc('anvil_mine', ['0x1']);
    await tick();
    await t1.commit();
    const txA = await usdt.transfer(payer, addressA, usdt18(3n));
    const txB = await usdt.transfer(payer, addressB, usdt18(4n));
    await tick();
    await anvil.rpc('anvil_mine', ['0x1']);
    await tick();
    expect(await depositsOf('pl_commit_order_b')).toEqual([{ owner_id: 'pl_commit_order_b', tx_hash: txB, derived_index: null }]);
    expect(await depositsOf('pl_commit_order_a')).toEqual([{ owner_id: 'pl_commit_order_a', tx_hash: txA, derived_index: null }]);
  });
});

async function registerEvmKey(store: CreatedStore, env: Environment, xpub: string) {
  const key = store.keys[env].secretKey;
  const res = await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/evm`, payload: { xpub }, key });
  expect(res.status).toBe(200);
}

async function storeWithEvmKey(name: string, env: Environment) {
  const store = await stack.createStore(name);
  const { evm } = randomAccountXpubs();
  const key = store.keys[env].secretKey;
  await registerEvmKey(store, env, evm);
  const derive = async (index: number): Promise<string> => {
    const d = await stack.request({ method: 'POST', url: '/v1/wallets/derive', payload: { index }, key });
    expect(d.status).toBe(200);
    // The gap after the highest is written just after the answer.
    await gapFillsSettled();
    return d.body.bsc as string;
  };
  return { store, xpub: evm, derive };
}

const countRow = z.object({ n: z.number() });
const watchedLinkRows = (env: Environment) =>
  stack.pool.oneFirst(sql.type(countRow)`SELECT count(*)::int AS n FROM watched_addresses WHERE family = 'evm' AND environment = ${env}`);

describe('receive addresses handed out by derive', () => {
  it('are read from the database on every load, full reloads included, never derived by the watch set', async () => {
    const { store, derive } = await storeWithEvmKey('Stored addresses', 'live');
    const derived = await derive(2);
    // Make the stored address differ from the derivation: only a set that reads it can match it.
    const stored = freshAddress();
    await stack.pool.query(sql.unsafe`UPDATE derived_addresses SET address = ${stored}
      WHERE store_id = ${store.clientId} AND environment = 'live' AND derived_index = 2`);
    const set = new WatchSet('evm', 'live');
    const now = Date.now();
    for (const at of [now, now + 6 * 60_000, now + 12 * 60_000]) {
      await set.refresh(stack.pool, at);
      expect(set.match(stored, at)).toEqual({ kind: 'derived', id: `${store.clientId}:2`, storeId: store.clientId, derivedIndex: 2 });
      expect(set.match(derived, at)).toBeUndefined();
      expect(set.size).toBe(1 + 20);
    }
  });

  it('follow the registered key: a replaced key leaves at the next full reload, a key registered again is back at the next refresh', async () => {
    const { store, xpub: first, derive } = await storeWithEvmKey('Key change', 'live');
    const owner = { kind: 'derived', storeId: store.clientId, derivedIndex: 1 };
    const firstAddress = await derive(1);
    const set = new WatchSet('evm', 'live');
    const t0 = Date.now();
    await set.refresh(stack.pool, t0);
    expect(set.match(firstAddress, t0)).toMatchObject(owner);
    await registerEvmKey(store, 'live', randomAccountXpubs().evm);
    const secondAddress = await derive(1);
    await set.refresh(stack.pool, t0 + 1_000);
    expect(set.match(secondAddress, t0)).toMatchObject(owner);
    const full = t0 + 6 * 60_000;
    await set.refresh(stack.pool, full);
    expect(set.match(firstAddress, full)).toBeUndefined();
    expect(set.match(secondAddress, full)).toMatchObject(owner);
    // The first key again, with no new derive: its rows, written long ago, come back with it.
    await registerEvmKey(store, 'live', first);
    await set.refresh(stack.pool, full + 1_000);
    expect(set.match(firstAddress, full)).toMatchObject(owner);
    await set.refresh(stack.pool, full + 6 * 60_000);
    expect(set.match(secondAddress, full)).toBeUndefined();
  });

  let bounded = false;
  const highAddresses: { index: number; address: string }[] = [];

  it('watches any legal index at the cost of the indexes handed out, not of their value', async () => {
    const { derive } = await storeWithEvmKey('Big indexes', 'test');
    const links = await watchedLinkRows('test');
    await derive(3);
    highAddresses.push({ index: 1_000_000, address: await derive(1_000_000) });
    // Handed out: 3 and 1,000,000; the gap: the 20 after the highest.
    expect(await refreshInChild(stack.config.databaseUrl!, 'evm', 'test')).toBe(links + 2 + 20);
    highAddresses.push({ index: 2147483647, address: await derive(2147483647) });
    // No index exists past 2^31 − 1, so no gap; the gap after 1,000,000 is no longer the highest's.
    expect(await refreshInChild(stack.config.databaseUrl!, 'evm', 'test')).toBe(links + 3);
    bounded = true;
  }, 240_000);

  it('emits transfer.confirmed for deposits to indexes 2147483647 and 1,000,000 through a real watcher tick', async () => {
    if (!bounded) throw new Error('loading the watch set did not finish: a tick in this process would hang');
    const sent = new Map<string, number>();
    for (const { index, address } of highAddresses) sent.set(await usdt.transfer(payer, address as Address, usdt18(2n)), index);
    const events = await eventually(async () => {
      await anvil.rpc('anvil_mine', ['0x1']);
      await tick();
      const rows = await stack.pool.any(sql.type(z.object({ payload: z.any() }))`
        SELECT payload FROM events WHERE type = 'transfer.confirmed' AND payload->'data'->>'txHash' = ANY(${sql.array([...sent.keys()], 'text')})`);
      return rows.length === sent.size ? rows : undefined;
    }, 'transfer.confirmed for both deposits');
    for (const { payload } of events) {
      const index = sent.get(payload.data.txHash)!;
      const address = highAddresses.find((h) => h.index === index)!.address;
      expect(payload.data).toMatchObject({ network: 'BSC', index, address: getAddress(address), from: getAddress(payer), amount: '2' });
    }
  }, 60_000);

  it('backfills stores whose marks predate per-index rows: 0 … min(highest, bound), the highest and its gap', async () => {
    const small = await stack.createStore('Legacy small');
    const large = await stack.createStore('Legacy large');
    const keys = { small: await connectAllRails(stack, small.clientId, 'live'), large: await connectAllRails(stack, large.clientId, 'live') };
    await stack.pool.query(sql.unsafe`INSERT INTO derived_index_marks (store_id, environment, highest_index, backfill_pending)
      VALUES (${small.clientId}, 'live', 5, true), (${large.clientId}, 'live', 5000000, true)`);
    await backfillLegacyDerivedAddresses(stack.pool, { bound: 10, batchSize: 7 });
    const rows = await stack.pool.any(sql.type(z.object({ store_id: z.string(), family: z.string(), indexes: z.array(z.number()) }))`
      SELECT store_id, family, array_agg(derived_index ORDER BY derived_index) AS indexes FROM derived_addresses
      WHERE store_id IN (${small.clientId}, ${large.clientId}) GROUP BY store_id, family ORDER BY store_id, family`);
    const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const expected = { [small.clientId]: range(0, 25), [large.clientId]: [...range(0, 9), ...range(5_000_000, 5_000_020)] };
    expect(rows).toHaveLength(4);
    for (const r of rows) expect(r.indexes).toEqual(expected[r.store_id]);
    const pending = await stack.pool.oneFirst(sql.type(countRow)`
      SELECT count(*)::int AS n FROM derived_index_marks WHERE backfill_pending`);
    expect(pending).toBe(0);
    const set = new WatchSet('tron', 'live');
    await set.refresh(stack.pool, Date.now());
    const address = deriveAddress(keys.large.tron, 'tron', 0, 5_000_007);
    expect(set.match(address, Date.now())).toMatchObject({ kind: 'derived', storeId: large.clientId, derivedIndex: 5_000_007 });
  });
});
