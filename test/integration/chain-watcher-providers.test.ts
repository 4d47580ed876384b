import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { createPublicClient, getAddress, http, pad, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { z } from 'zod';
import { openPool } from '../../db/pool.js';
import type { Cursor } from '../../domain/chain-cursor.js';
import { isUnreachable } from '../../rails/chain/outage.js';
import { ProviderBook, providerHealth } from '../../rails/chain/providers.js';
import { WatchSet } from '../../rails/chain/watch-set.js';
import { transferTopic } from '../../rails/evm/decode-transfers.js';
import { scanEvmTick, type EvmChainView, type TickResult } from '../../rails/evm/scan-tick.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { createTestDatabase } from '../helpers/database.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { atBlock, startFlakyRpc, type Fault, type FlakyRpc, type RpcAnswer } from '../helpers/flaky-rpc.js';
import { startStack } from '../helpers/stack.js';
import { Keypair } from '@solana/web3.js';
import { loadConfig } from '../../config/config.js';
import { solanaView } from '../../rails/solana/view.js';
import { startSolanaEmulator } from '../../emulators/solana/server.js';
import { startTronGridEmulator } from '../../emulators/trongrid/server.js';
import { solidifyLag } from '../../emulators/trongrid/jsonrpc.js';
import { tronAddressFromBytes, tronAddressToEvmHex } from '../../rails/tron/address.js';
import { evmClient } from '../../rails/evm/client.js';
import { readSolidifiedBlock } from '../../rails/tron/client.js';
import { eventually } from '../helpers/wait.js';

/**
 * More than one RPC per rail (rails/chain/README.md, "Two providers"): a payment is found as long
 * as one configured provider tells the truth, and one provider cannot fake one. Every provider is
 * a flaky-RPC proxy in front of the same anvil, so the chain is real and each lie is chosen.
 */
let anvil: Anvil;
let usdt: TestToken;
let payer: Address;
let db: { url: string; drop: () => Promise<void> };
let pool: DatabasePool;
const rpcs: FlakyRpc[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 6 });
  payer = anvil.accounts[1]!;
  await usdt.mint(payer, 10n ** 15n);
  db = await createTestDatabase();
  pool = await openPool(db.url, 3);
  for (let i = 0; i < 3; i++) rpcs.push(await startFlakyRpc(anvil.url));
}, 120_000);
afterEach(() => rpcs.forEach((r) => r.clear()));
afterAll(async () => {
  for (const r of rpcs) await r.close();
  await pool?.end();
  await db?.drop();
  await anvil?.stop();
});

const [A, B, C] = [0, 1, 2];
const mine = (blocks: number) => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
const head = () => anvil.publicClient.getBlockNumber({ cacheTime: 0 });
const depositOf = (tx: string) =>
  pool.maybeOne(sql.type(z.object({ state: z.string(), block_number: z.string() }))`
    SELECT state, block_number::text FROM chain_deposits WHERE tx_hash = ${tx.toLowerCase()}`);
const logsCalls = (r: FlakyRpc) => r.calls.filter((c) => c.method === 'eth_getLogs').length;

async function watchedAddress(): Promise<Address> {
  const address = privateKeyToAddress(generatePrivateKey());
  await pool.query(sql.unsafe`INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
    VALUES ('evm', 'test', ${address}, 'payment_link', ${`pl_${address.slice(2, 14)}`}, 'st_providers', now() + interval '1 hour')`);
  return address;
}

/** An eth_getLogs answer without the transfers to `to`: a provider hiding a payment. */
const hiding = (to: Address): Fault => ({
  rewrite: (a) => ({ ...a, result: (a.result as { topics: string[] }[]).filter((l) => l.topics[2]?.slice(26).toLowerCase() !== to.slice(2).toLowerCase()) }),
});

type Line = { obj: Record<string, unknown>; msg: string };

/** A watcher of one rail over the given proxies, in that failover order, with its own provider book. */
function watcher(rail: 'USDT_BSC' | 'USDT_ETH' | 'USDT_POLYGON', positions: number[], confirmations = 2, disputeHoldBlocks?: bigint) {
  const lines: Line[] = [];
  const logger = { warn: (obj: object, msg: string) => lines.push({ obj: obj as never, msg }), info: () => undefined } as never;
  const urls = positions.map((p) => rpcs[p]!.url);
  const book = new ProviderBook(rail, 'test', urls, logger);
  const view: EvmChainView = {
    rail, environment: 'test', book, token: usdt.address, toWatchAddress: (hex) => getAddress(hex), confirmations,
    rpcs: urls.map((url) => ({ client: createPublicClient({ transport: http(url, { timeout: 2_000, retryCount: 0 }), cacheTime: 0 }) })),
    ...(disputeHoldBlocks !== undefined ? { disputeHoldBlocks } : {}),
  };
  const watch = new WatchSet('evm', 'test');
  let cursor: Cursor | null = null;
  return {
    book,
    lines,
    get cursor() {
      return cursor!;
    },
    async tick(): Promise<TickResult> {
      const result = await scanEvmTick(pool, view, watch, cursor, Date.now());
      cursor = result.cursor;
      return result;
    },
  };
}

/**
 * Provider `p` reports a 5 USDT transfer to a watched address in the latest block that no
 * transaction made: every eth_getLogs answer covering that block gains it until `stop()`.
 */
async function inventTransfer(p: number): Promise<{ n: bigint; fakeTx: string; stop: () => void }> {
  const n = await head();
  const block = await anvil.publicClient.getBlock({ blockNumber: n });
  const to = await watchedAddress();
  const fakeTx = `0x${randomBytes(32).toString('hex')}`;
  const fake = {
    address: usdt.address.toLowerCase(), topics: [transferTopic, pad(payer.toLowerCase() as Address), pad(to.toLowerCase() as Address)],
    data: pad('0x4c4b40'), blockNumber: `0x${n.toString(16)}`, blockHash: block.hash, transactionHash: fakeTx,
    transactionIndex: '0x0', logIndex: '0x0', removed: false,
  };
  const covers = (params: unknown[]) => {
    const f = params[0] as { fromBlock: string; toBlock: string };
    return BigInt(f.fromBlock) <= n && n <= BigInt(f.toBlock);
  };
  const stop = rpcs[p]!.fail({ method: 'eth_getLogs', when: covers, fault: { rewrite: (a: RpcAnswer) => ({ ...a, result: [...(a.result as unknown[]), fake] }) } });
  return { n, fakeTx, stop };
}

describe('a watcher with two providers', () => {
  it('finds a transfer the first provider hides, through the second, and reports the first', async () => {
    const w = watcher('USDT_BSC', [A, B]);
    await w.tick();
    await w.tick();
    const to = await watchedAddress();
    rpcs[A]!.fail({ method: 'eth_getLogs', fault: hiding(to) });
    const tx = await usdt.transfer(payer, to, 5_000_000n);
    const found = await w.tick();
    expect(await depositOf(tx)).toMatchObject({ state: 'seen' });
    expect(found.recovered).toEqual([expect.objectContaining({ txHash: tx.toLowerCase(), by: 'other-provider' })]);
    expect(w.book.health()[A]).toMatchObject({ state: 'disagreeing', sidelinedUntil: expect.any(String) });
    expect(w.lines[0]).toMatchObject({ obj: { rail: 'USDT_BSC', provider: `#1 ${new URL(rpcs[A]!.url).host}`, state: 'disagreeing' } });
    expect(JSON.stringify(w.lines)).not.toContain('http://'); // a URL may carry a provider's key
    await mine(2);
    await w.tick();
    expect(await depositOf(tx)).toMatchObject({ state: 'confirmed' });
  }, 30_000);

  it('does not count a transfer one provider invents, holds the cursor below it while it is reported, and reports that provider', async () => {
    const w = watcher('USDT_ETH', [A, B]);
    await w.tick();
    await mine(1);
    const { n, fakeTx, stop } = await inventTransfer(B);
    await mine(3);
    for (let i = 0; i < 3; i++) await w.tick();
    expect(await depositOf(fakeTx)).toBeNull();
    expect(BigInt(w.cursor.number)).toBeLessThan(n);
    expect(w.book.health()[B]).toMatchObject({ state: 'disagreeing', reason: expect.stringContaining('does not hold') });
    expect(w.book.health()[A]!.state).toBe('ok');
    // A real payment after the invented one is still found and confirmed meanwhile.
    const tx = await usdt.transfer(payer, await watchedAddress(), 1_000_000n);
    await mine(2);
    await w.tick();
    expect(await depositOf(tx)).toMatchObject({ state: 'confirmed' });
    stop();
    await w.tick();
    await w.tick();
    expect(BigInt(w.cursor.number)).toBeGreaterThan(n);
    expect(await depositOf(fakeTx)).toBeNull();
  }, 30_000);

  it('lets the cursor past a transfer still disputed after the hold, so the rail never stalls, and still never counts it', async () => {
    const w = watcher('USDT_BSC', [A, B], 2, 20n);
    await w.tick();
    await mine(1);
    const { n, fakeTx, stop } = await inventTransfer(B);
    try {
      await mine(5);
      for (let i = 0; i < 2; i++) await w.tick();
      expect(BigInt(w.cursor.number)).toBeLessThan(n);
      // Past the hold (20 final blocks here, 1,000 by default) the cursor passes the disputed block.
      await mine(30);
      const passedAt = [];
      for (let i = 0; i < 3; i++) passedAt.push((await w.tick()).disputePassed);
      expect(passedAt).toContain(String(n));
      expect(BigInt(w.cursor.number)).toBeGreaterThan(n);
      expect(await depositOf(fakeTx)).toBeNull();
    } finally {
      stop();
    }
  }, 30_000);

  it('neither confirms nor drops a deposit while the providers answer different hashes for its block', async () => {
    const w = watcher('USDT_POLYGON', [A, B]);
    await w.tick();
    const tx = await usdt.transfer(payer, await watchedAddress(), 2_000_000n);
    await w.tick();
    const n = BigInt((await depositOf(tx))!.block_number);
    const forked: Fault = { rewrite: (a) => ({ ...a, result: { ...(a.result as object), hash: `0x${randomBytes(32).toString('hex')}` } }) };
    rpcs[B]!.fail({ method: 'eth_getBlockByNumber', when: atBlock(n), fault: forked });
    await mine(3);
    const result = await w.tick();
    expect(await depositOf(tx)).toMatchObject({ state: 'seen' });
    expect(result.readFailures).toBeGreaterThanOrEqual(1);
    expect(w.book.health().map((h) => h.state)).toEqual(['disagreeing', 'disagreeing']);
    rpcs[B]!.clear();
    await w.tick();
    expect(await depositOf(tx)).toMatchObject({ state: 'confirmed' });
  }, 30_000);

  it('reads on when one provider cannot be reached, and reports an outage only when none can', async () => {
    const closed = 'http://127.0.0.1:9'; // discard: nothing listens there
    const urls = [rpcs[A]!.url, closed];
    const book = new ProviderBook('USDT_BSC', 'test', urls);
    const client = (url: string) => createPublicClient({ transport: http(url, { timeout: 2_000, retryCount: 0 }), cacheTime: 0 });
    const view: EvmChainView = {
      rail: 'USDT_BSC', environment: 'test', book, token: usdt.address, toWatchAddress: (hex) => getAddress(hex), confirmations: 2,
      rpcs: urls.map((url) => ({ client: client(url) })),
    };
    const tx = await usdt.transfer(payer, await watchedAddress(), 3_000_000n);
    const result = await scanEvmTick(pool, view, new WatchSet('evm', 'test'), null, Date.now());
    expect(result.head).toBe(String(await head()));
    expect(book.health()[1]).toMatchObject({ state: 'erroring', sidelinedUntil: expect.any(String) });
    // One provider's word is not enough when two are configured: the transfer waits for the other.
    expect(await depositOf(tx)).toBeNull();
    const none: EvmChainView = { ...view, rpcs: [{ client: client(closed) }, { client: client('http://127.0.0.1:7') }], book: new ProviderBook('USDT_BSC', 'test', [closed, 'http://127.0.0.1:7']) };
    const outage = await scanEvmTick(pool, none, new WatchSet('evm', 'test'), null, Date.now()).then(() => undefined, (err: unknown) => err);
    expect(isUnreachable(outage)).toBe(true);
  }, 30_000);
});

describe('a watcher with three providers', () => {
  it('sidelines a provider whose head lags and confirms through the other two', async () => {
    const w = watcher('USDT_BSC', [A, B, C]);
    await mine(60);
    const stale: Fault = { rewrite: (a) => ({ ...a, result: `0x${(BigInt(a.result as string) - 50n).toString(16)}` }) };
    rpcs[B]!.fail({ method: 'eth_blockNumber', fault: stale });
    await w.tick();
    expect(w.book.health()[B]).toMatchObject({ state: 'lagging', reason: expect.stringContaining('50 blocks behind'), sidelinedUntil: expect.any(String) });
    expect(w.lines.find((l) => l.obj.state === 'lagging')).toMatchObject({ obj: { rail: 'USDT_BSC', provider: `#2 ${new URL(rpcs[B]!.url).host}` } });
    const before = logsCalls(rpcs[B]!);
    const tx = await usdt.transfer(payer, await watchedAddress(), 4_000_000n);
    await w.tick();
    await mine(2);
    await w.tick();
    expect(await depositOf(tx)).toMatchObject({ state: 'confirmed' });
    expect(logsCalls(rpcs[B]!)).toBe(before); // asked last, so not asked at all while two others answer
  }, 30_000);
});

describe('RPC_URL_<RAIL>_<ENV> as a list (end to end)', () => {
  it('confirms a payment link once while the first RPC of the list hides its transfer, and shows both RPCs in the provider health', async () => {
    const stack = await startStack({
      CHAIN_WATCHERS: 'on',
      CHAIN_POLL_MS: '100',
      RPC_URL_USDT_ETH_TEST: `${rpcs[A]!.url},${rpcs[B]!.url}`,
      USDT_CONTRACT_USDT_ETH_TEST: usdt.address,
      CONFIRMATIONS_USDT_ETH: '2',
    });
    try {
      const store = await stack.createStore('Two RPCs shop');
      const key = store.keys.test.secretKey;
      await connectAllRails(stack, store.clientId, 'test');
      const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '8', enabledRails: ['USDT_ETH'] } });
      expect(created.status).toBe(201);
      const link = created.body;
      rpcs[A]!.fail({ method: 'eth_getLogs', fault: hiding(link.ethAddress) });
      const tx = await usdt.transfer(payer, link.ethAddress, 8_000_000n);
      await mine(2);
      const done = await eventually(async () => {
        const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
        return l.status === 'CONFIRMED' ? l : undefined;
      }, 'CONFIRMED', 30_000);
      expect(done.payments).toHaveLength(1);
      expect(done.externalId).toBe(tx);
      expect(done.amountReceived).toBe('8');
      const rail = providerHealth().find((h) => h.rail === 'USDT_ETH' && h.environment === 'test')!;
      expect(rail.providers.map((p) => [p.index, p.host])).toEqual([[1, new URL(rpcs[A]!.url).host], [2, new URL(rpcs[B]!.url).host]]);
      expect(rail.providers[0]!.state).toBe('disagreeing');
      // GET /ready names each provider by position only (the route is public), and the rail is served.
      const ready = await stack.request({ method: 'GET', url: '/ready' });
      const check = ready.body.checks.find((c: { name: string }) => c.name === 'providers:USDT_ETH:test');
      expect(check).toMatchObject({ ok: true, providers: [{ index: 1, state: 'disagreeing' }, { index: 2, state: 'ok' }] });
      expect(check.detail).toMatch(/^1 of 2 providers ok\. RPC 1 disagreeing: .+; RPC 2 ok\.$/);
      expect(JSON.stringify(ready.body)).not.toContain(new URL(rpcs[A]!.url).host);
    } finally {
      await stack.stop();
    }
  }, 90_000);
});

describe('Solana with a list of RPCs', () => {
  it('fails every read over to the next RPC when the first errs or cannot be reached, and reports the first', async () => {
    const emu = await startSolanaEmulator();
    const front = await startFlakyRpc(emu.url);
    try {
      front.fail({ method: 'getSlot', fault: 'http500' });
      const mint = Keypair.generate().publicKey.toBase58();
      const { rails } = loadConfig({
        DATABASE_URL: 'postgres://unused', TEMPORAL_ADDRESS: 'unused:7233',
        RPC_URL_USDT_SOL_TEST: `${front.url},${emu.url}`, USDT_CONTRACT_USDT_SOL_TEST: mint,
      });
      const view = solanaView(rails, 'test');
      expect(await view.connection.getSlot('confirmed')).toBe(emu.ledger.tip);
      expect(front.calls.filter((c) => c.method === 'getSlot' && c.fault === 'http500')).toHaveLength(1);
      const sol = providerHealth().find((h) => h.rail === 'USDT_SOL' && h.environment === 'test')!;
      expect(sol.providers.map((p) => p.state)).toEqual(['erroring', 'ok']);
      // Asked last now: the next read goes to the second RPC first.
      await view.connection.getSlot('confirmed');
      expect(front.calls.filter((c) => c.method === 'getSlot')).toHaveLength(1);
    } finally {
      await front.close();
      await emu.close();
    }
  }, 30_000);
});

describe('TRON with two providers', () => {
  it('finds a TRC-20 transfer the first provider hides, through the second and the first one\'s own receipt, and confirms it once solidified', async () => {
    const tron = await startTronGridEmulator();
    tron.chain.finalizedTag = false; // the solidified head comes from /walletsolidity/getnowblock
    const fronts = [await startFlakyRpc(tron.url), await startFlakyRpc(tron.url)];
    try {
      const base58 = () => tronAddressFromBytes(randomBytes(20));
      const [contract, payerT, to] = [base58(), base58(), base58()];
      await pool.query(sql.unsafe`INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
        VALUES ('tron', 'test', ${to}, 'payment_link', 'pl_tron_two', 'st_providers', now() + interval '1 hour')`);
      const urls = fronts.map((f) => f.url);
      const book = new ProviderBook('USDT_TRON', 'test', urls);
      const view: EvmChainView = {
        rail: 'USDT_TRON', environment: 'test', book, token: tronAddressToEvmHex(contract), confirmations: undefined,
        toWatchAddress: (hex) => tronAddressFromBytes(Buffer.from(hex.slice(2), 'hex')),
        rpcs: urls.map((url) => ({
          client: evmClient(`${url}/jsonrpc`, { timeoutMs: 2_000, retryCount: 0 }),
          solidifiedHead: async () => (await readSolidifiedBlock(url)).number,
        })),
      };
      const watch = new WatchSet('tron', 'test');
      let cursor: Cursor | null = null;
      const tick = async () => (cursor = (await scanEvmTick(pool, view, watch, cursor, Date.now())).cursor);
      await tick();
      fronts[0]!.fail({ method: 'eth_getLogs', fault: hiding(tronAddressToEvmHex(to) as Address) });
      const [txid] = tron.chain.mine(1, [{ contract, from: payerT, to, amount: 9_000_000n }]);
      await tick();
      expect(await depositOf(`0x${txid}`)).toMatchObject({ state: 'seen' });
      expect(book.health()[0]).toMatchObject({ state: 'disagreeing', reason: expect.stringContaining('its receipt shows') });
      tron.chain.mine(solidifyLag - 1);
      await tick();
      expect(await depositOf(`0x${txid}`)).toMatchObject({ state: 'seen' });
      tron.chain.mine(1);
      await tick();
      expect(await depositOf(`0x${txid}`)).toMatchObject({ state: 'confirmed' });
      expect(fronts.every((f) => f.calls.length > 0)).toBe(true);
    } finally {
      for (const f of fronts) await f.close();
      await tron.close();
    }
  }, 30_000);
});

