import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type DatabasePool } from 'slonik';
import { createPublicClient, erc20Abi, getAddress, http, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { z } from 'zod';
import { openPool } from '../../db/pool.js';
import type { Cursor } from '../../domain/chain-cursor.js';
import { WatchSet } from '../../rails/chain/watch-set.js';
import { ProviderBook } from '../../rails/chain/providers.js';
import { scanEvmTick, type EvmChainView, type TickResult } from '../../rails/evm/scan-tick.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { createTestDatabase } from '../helpers/database.js';
import { startFlakyRpc, type Fault, type FlakyRpc } from '../helpers/flaky-rpc.js';

/**
 * Watchers rescan what is not final (rails/chain/README.md). One `eth_getLogs` answer that comes
 * back empty (a load-balanced provider whose backend lags) must not move the cursor past a
 * deposit: the next tick reads the window again and finds it. Anvil is the chain; a flaky-RPC
 * proxy in front of it rewrites the answers a test picks. Ticks run directly on PostgreSQL.
 */
let anvil: Anvil;
let usdt: TestToken;
let payer: Address;
let db: { url: string; drop: () => Promise<void> };
let pool: DatabasePool;
let rpc: FlakyRpc;

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 6 });
  payer = anvil.accounts[1]!;
  await usdt.mint(payer, 10n ** 15n);
  db = await createTestDatabase();
  pool = await openPool(db.url, 3);
  rpc = await startFlakyRpc(anvil.url);
}, 120_000);
afterEach(() => rpc.clear());
afterAll(async () => {
  await rpc?.close();
  await pool?.end();
  await db?.drop();
  await anvil?.stop();
});

const mine = (blocks: number) => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
const head = () => anvil.publicClient.getBlockNumber({ cacheTime: 0 });
/** An `eth_getLogs` answer with every log taken out, as a lagging backend gives it. */
const emptyLogs: Fault = { rewrite: (a) => ({ ...a, result: [] }) };
const depositOf = (tx: string) =>
  pool.maybeOne(sql.type(z.object({ state: z.string(), block_number: z.string() }))`
    SELECT state, block_number::text FROM chain_deposits WHERE tx_hash = ${tx}`);

async function watchedAddress(): Promise<Address> {
  const address = privateKeyToAddress(generatePrivateKey());
  await pool.query(sql.unsafe`INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
    VALUES ('evm', 'test', ${address}, 'payment_link', ${`pl_${address.slice(2, 14)}`}, 'st_rescan', now() + interval '1 hour')`);
  return address;
}

/** One watcher (its own rail, so the tests' cursors stay apart) ticking through the proxy. */
function watcher(rail: 'USDT_ETH' | 'USDT_POLYGON' | 'USDT_BSC', confirmations: number) {
  const client = createPublicClient({ transport: http(rpc.url, { timeout: 2_000, retryCount: 0 }), cacheTime: 0 });
  const view: EvmChainView = {
    rail, environment: 'test', rpcs: [{ client }], book: new ProviderBook(rail, 'test', [rpc.url]),
    token: usdt.address, toWatchAddress: (hex) => getAddress(hex), confirmations,
  };
  const watch = new WatchSet('evm', 'test');
  let cursor: Cursor | null = null;
  return {
    get cursor() {
      return cursor;
    },
    async tick(): Promise<TickResult> {
      const result = await scanEvmTick(pool, view, watch, cursor, Date.now());
      cursor = result.cursor;
      return result;
    },
  };
}

describe('a watcher rescans the blocks that are not final', () => {
  it('finds a deposit whose first eth_getLogs answer came back empty, at depth 1 (finalized = head)', async () => {
    const w = watcher('USDT_ETH', 1);
    for (let i = 0; i < 3; i++) await w.tick(); // settled at the head
    const tx = await usdt.transfer(payer, await watchedAddress(), 7_000_000n);
    rpc.fail({ method: 'eth_getLogs', fault: emptyLogs, times: 1 });
    const first = await w.tick();
    expect(rpc.calls.filter((c) => c.method === 'eth_getLogs' && c.fault === 'rewrite')).toHaveLength(1);
    expect(await depositOf(tx)).toBeNull(); // the empty answer hid it from this tick
    expect(first.caughtUp).toBe(true); // scanned to the head, so the watcher sleeps a poll interval
    for (let i = 0; i < 3; i++) await w.tick();
    expect(await depositOf(tx)).toMatchObject({ state: 'confirmed' });
    expect(BigInt(w.cursor!.number)).toBe(await head());
  }, 30_000);

  it('keeps its cursor on the finalized block and reads the window from it to the head on every tick (depth 3)', async () => {
    const w = watcher('USDT_POLYGON', 3);
    for (let i = 0; i < 3; i++) await w.tick();
    await mine(5);
    const from = rpc.calls.length;
    const result = await w.tick();
    const h = await head();
    const reads = rpc.calls.slice(from).filter((c) => c.method === 'eth_getLogs').map((c) => c.params[0] as { fromBlock: string; toBlock: string });
    expect(reads).toHaveLength(1);
    expect(BigInt(reads[0]!.toBlock)).toBe(h);
    expect(BigInt(result.finalized)).toBe(h - 2n);
    // The cursor moved only over blocks an earlier tick had read too: it stands below the new ones.
    expect(BigInt(result.cursor.number)).toBeLessThanOrEqual(h - 5n);
    expect(result.cursor.scannedTo).toBe(String(h));
    const next = await w.tick();
    expect(BigInt(next.cursor.number)).toBe(h - 2n); // final and read twice
    const before = rpc.calls.length;
    await w.tick();
    const again = rpc.calls.slice(before).find((c) => c.method === 'eth_getLogs')!.params[0] as { fromBlock: string; toBlock: string };
    expect([BigInt(again.fromBlock), BigInt(again.toBlock)]).toEqual([h - 1n, h]); // the blocks not final yet, read again
  }, 30_000);

  it('finds a deposit that the first two answers left out while its block was not yet final (depth 3)', async () => {
    const w = watcher('USDT_POLYGON', 3);
    await w.tick();
    const tx = await usdt.transfer(payer, await watchedAddress(), 3_000_000n);
    rpc.fail({ method: 'eth_getLogs', fault: emptyLogs, times: 2 });
    await w.tick();
    await mine(1);
    await w.tick();
    expect(await depositOf(tx)).toBeNull();
    await mine(1);
    await w.tick(); // the third read of its block, which is now final: found, then confirmed
    expect(await depositOf(tx)).toMatchObject({ state: 'confirmed' });
  }, 30_000);

  it('finds a transfer left out of a partial answer, among others of the same block', async () => {
    const w = watcher('USDT_BSC', 1);
    await w.tick();
    await w.tick();
    const [a, b] = [await watchedAddress(), await watchedAddress()];
    await anvil.rpc('evm_setAutomine', [false]);
    let txs: string[];
    try {
      const send = (to: Address, amount: bigint) =>
        anvil.walletClient.writeContract({ address: usdt.address, abi: erc20Abi, functionName: 'transfer', args: [to, amount], account: payer, chain: anvil.walletClient.chain });
      txs = [await send(a, 1_000_000n), await send(b, 2_000_000n)];
      await mine(1);
    } finally {
      await anvil.rpc('evm_setAutomine', [true]);
    }
    const firstOnly: Fault = { rewrite: (ans) => ({ ...ans, result: (ans.result as unknown[]).slice(0, 1) }) };
    rpc.fail({ method: 'eth_getLogs', fault: firstOnly, times: 1 });
    await w.tick();
    const states = await Promise.all(txs.map(depositOf));
    expect(states.filter((d) => d === null)).toHaveLength(1);
    await w.tick();
    for (const tx of txs) expect(await depositOf(tx)).toMatchObject({ state: 'confirmed' });
  }, 30_000);

  it('only reads on the first tick after a rewind: no block is passed on one read', async () => {
    const w = watcher('USDT_ETH', 1);
    await w.tick();
    await mine(2);
    const h = await head();
    // A cursor with no earlier read on record (a restart of a watcher saved before this change, or a rewind).
    const fresh = scanEvmTick(pool, {
      rail: 'USDT_ETH', environment: 'test', rpcs: [{ client: createPublicClient({ transport: http(rpc.url, { retryCount: 0 }), cacheTime: 0 }) }],
      book: new ProviderBook('USDT_ETH', 'test', [rpc.url]), token: usdt.address, toWatchAddress: (hex) => getAddress(hex), confirmations: 1,
    }, new WatchSet('evm', 'test'), { number: String(h - 2n), hash: null }, Date.now());
    const first = await fresh;
    expect(first.cursor).toMatchObject({ number: String(h - 2n), scannedTo: String(h) });
    expect(first.caughtUp).toBe(true);
  }, 30_000);
});
