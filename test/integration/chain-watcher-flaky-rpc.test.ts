import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Connection, Keypair } from '@solana/web3.js';
import { sql, type DatabasePool } from 'slonik';
import { createPublicClient, getAddress, http, type Address } from 'viem';
import { privateKeyToAddress, generatePrivateKey } from 'viem/accounts';
import { z } from 'zod';
import { createChainActivities } from '../../activities/chains/index.js';
import { scanEvmTick, type EvmChainView, type TickResult } from '../../rails/evm/scan-tick.js';
import { scanSolanaTick } from '../../rails/solana/scan-tick.js';
import { WatchSet } from '../../rails/chain/watch-set.js';
import { ProviderBook } from '../../rails/chain/providers.js';
import { upsertSeenDeposit, type Cursor } from '../../db/chain-repo.js';
import { openPool } from '../../db/pool.js';
import { startSolanaEmulator, type SolanaEmulator } from '../../emulators/solana/server.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { createTestDatabase } from '../helpers/database.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { atBlock, startFlakyRpc, type Fault, type FlakyRpc } from '../helpers/flaky-rpc.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * A failed read is not a reorganisation. Anvil (a real chain) and the Solana emulator sit behind
 * a proxy that fails chosen reads the ways providers fail; only a block at the same height with
 * a different hash may drop a deposit. The watcher's ticks are driven directly on a real
 * PostgreSQL, then once end to end through the link workflow.
 */
let anvil: Anvil;
let usdt: TestToken;
let payer: Address;
let db: { url: string; drop: () => Promise<void> };
let pool: DatabasePool;

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  payer = anvil.accounts[1]!;
  await usdt.mint(payer, 10n ** 30n);
  db = await createTestDatabase();
  pool = await openPool(db.url, 3);
}, 120_000);
afterAll(async () => {
  await pool?.end();
  await db?.drop();
  await anvil?.stop();
});

const usdt18 = (n: bigint) => n * 10n ** 18n;
const mine = (blocks: number) => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
// Never viem's cached block number (4 s by default): the head must be the chain's head now.
const head = () => anvil.publicClient.getBlockNumber({ cacheTime: 0 });
const everyFault: Fault[] = ['http500', 'timeout', 'malformed', 'null'];
const deposit = (tx: string) =>
  pool.one(sql.type(z.object({ state: z.string(), block_number: z.string() }))`
    SELECT state, block_number::text FROM chain_deposits WHERE tx_hash = ${tx}`);

/** A fresh address watched for a payment link, as link creation records it. */
async function watchedAddress(): Promise<Address> {
  const address = privateKeyToAddress(generatePrivateKey());
  await pool.query(sql.unsafe`INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
    VALUES ('evm', 'test', ${address}, 'payment_link', ${`pl_${address.slice(2, 14)}`}, 'st_flaky', now() + interval '1 hour')`);
  return address;
}

describe('EVM watcher behind a flaky RPC (scanEvmTick on anvil)', () => {
  let rpc: FlakyRpc;
  let view: EvmChainView;
  const watch = new WatchSet('evm', 'test');
  let cursor: Cursor | null = null;
  const tick = async (): Promise<TickResult> => {
    const result = await scanEvmTick(pool, view, watch, cursor, Date.now());
    cursor = result.cursor;
    return result;
  };

  beforeAll(async () => {
    rpc = await startFlakyRpc(anvil.url);
    // As production builds it (no retries inside viem), with a short timeout for the `timeout`
    // fault and no cached block number (ticks here follow each other faster than viem's 4 s cache).
    const client = createPublicClient({ transport: http(rpc.url, { timeout: 300, retryCount: 0 }), cacheTime: 0 });
    view = {
      rail: 'USDT_BSC', environment: 'test', rpcs: [{ client }], book: new ProviderBook('USDT_BSC', 'test', [rpc.url]),
      token: usdt.address, toWatchAddress: (hex) => getAddress(hex), confirmations: 3,
    };
  });
  afterEach(() => rpc.clear());
  afterAll(async () => {
    await rpc?.close();
  });

  it('keeps a seen deposit seen while reads of its block fail (500, timeout, malformed body, null), and confirms it once at depth', async () => {
    const to = await watchedAddress();
    const tx = await usdt.transfer(payer, to, usdt18(10n));
    await mine(1); // the cursor stands on the next block, not on the deposit's
    await tick();
    const n = BigInt((await deposit(tx)).block_number);
    expect((await deposit(tx)).state).toBe('seen');

    const states: string[] = [];
    const stop = rpc.fail({ method: 'eth_getBlockByNumber', when: atBlock(n), fault: everyFault });
    for (let i = 0; i < 4; i++) {
      await tick();
      states.push((await deposit(tx)).state);
    }
    await mine(3); // deep enough now, but a block that cannot be read cannot be confirmed either
    await tick();
    states.push((await deposit(tx)).state);
    expect(states).toEqual(['seen', 'seen', 'seen', 'seen', 'seen']);
    expect(rpc.calls.filter((c) => c.fault && c.method === 'eth_getBlockByNumber').length).toBeGreaterThanOrEqual(5);
    stop();

    // Every other block read fails, whatever the block: the deposit is confirmed, and stays so.
    rpc.fail({ method: 'eth_getBlockByNumber', every: 2, fault: everyFault });
    for (let i = 0; i < 6; i++) {
      await tick();
      states.push((await deposit(tx)).state);
    }
    rpc.clear();
    expect(states).not.toContain('dropped');
    expect(states).toContain('confirmed');
    expect(states.slice(states.indexOf('confirmed'))).toEqual(Array(states.length - states.indexOf('confirmed')).fill('confirmed'));
    const rows = await pool.anyFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM chain_deposits WHERE tx_hash = ${tx}`);
    expect(rows).toEqual(['confirmed']);
  }, 60_000);

  it('does not rewind its cursor when the block it stands on cannot be read', async () => {
    await tick();
    const standing = BigInt(cursor!.number);
    rpc.fail({ method: 'eth_getBlockByNumber', when: atBlock(standing), fault: everyFault });
    await mine(2);
    const from = rpc.calls.length;
    const result = await tick();
    const scannedFrom = rpc.calls.slice(from).filter((c) => c.method === 'eth_getLogs').map((c) => BigInt((c.params[0] as { fromBlock: string }).fromBlock));
    expect(scannedFrom.filter((b) => b <= standing)).toEqual([]); // a rewind would rescan below the cursor
    expect(BigInt(result.cursor.number)).toBe(standing);
    rpc.clear();
    const caughtUp = await tick();
    expect(caughtUp.caughtUp).toBe(true);
    expect(BigInt(caughtUp.cursor.scannedTo!)).toBe(await head()); // read to the head; the cursor itself stays on a final block
  }, 30_000);

  it('settles the other deposits while one block stays unreadable, and drops nothing', async () => {
    const a = await usdt.transfer(payer, await watchedAddress(), usdt18(1n));
    const b = await usdt.transfer(payer, await watchedAddress(), usdt18(2n)); // the next block
    await tick();
    const blockA = BigInt((await deposit(a)).block_number);
    expect(BigInt((await deposit(b)).block_number)).toBe(blockA + 1n);
    expect([(await deposit(a)).state, (await deposit(b)).state]).toEqual(['seen', 'seen']);
    rpc.fail({ method: 'eth_getBlockByNumber', when: atBlock(blockA), fault: ['timeout', 'http500'] });
    await mine(3);
    const started = Date.now();
    const result = await tick();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.readFailures).toBe(1);
    expect([(await deposit(a)).state, (await deposit(b)).state]).toEqual(['seen', 'confirmed']);
    rpc.clear();
    await tick();
    expect((await deposit(a)).state).toBe('confirmed');
  }, 30_000);

  it('still drops a deposit whose block was replaced by a different one (anvil_reorg), once a read shows it', async () => {
    const tx = await usdt.transfer(payer, await watchedAddress(), usdt18(3n));
    await tick();
    const n = BigInt((await deposit(tx)).block_number);
    expect(n).toBe(await head());
    await anvil.rpc('anvil_reorg', [1, []]); // block n is now another, empty block
    // A lagging node that has no block n yet, or a failing one, is no evidence: still seen.
    const stop = rpc.fail({ method: 'eth_getBlockByNumber', when: atBlock(n), fault: ['null', 'http500', 'malformed'] });
    await tick();
    expect((await deposit(tx)).state).toBe('seen');
    stop();
    const result = await tick();
    expect((await deposit(tx)).state).toBe('dropped');
    expect(BigInt(result.cursor.number)).toBeLessThan(n); // rewound, so a re-included transfer is found again
  }, 30_000);
});

describe('Solana watcher behind a flaky RPC (scanSolanaTick on the emulator)', () => {
  let emu: SolanaEmulator;
  let rpc: FlakyRpc;
  const mint = Keypair.generate().publicKey.toBase58();
  const customer = Keypair.generate().publicKey.toBase58();

  beforeAll(async () => {
    emu = await startSolanaEmulator();
    emu.ledger.addMint(mint, 6);
    emu.ledger.fund(customer, mint, 1_000_000_000n);
    rpc = await startFlakyRpc(emu.url);
  });
  afterEach(() => rpc.clear());
  afterAll(async () => {
    await rpc?.close();
    await emu?.close();
  });

  it('keeps a seen deposit when its status check fails or comes back short, although the root has passed its slot', async () => {
    const merchant = Keypair.generate().publicKey.toBase58();
    const reference = Keypair.generate().publicKey.toBase58();
    const sig = emu.ledger.submitTransfer({ from: customer, toOwner: merchant, mint, amount: 5_000_000n, references: [reference] });
    const slot = emu.ledger.tip;
    await upsertSeenDeposit(pool, 'USDT_SOL', 'test', {
      txHash: sig, logIndex: 0, to: merchant, from: customer, amountMinor: 5_000_000n, decimals: 6,
      blockNumber: BigInt(slot), blockHash: null, owner: { kind: 'payment_link', id: 'pl_sol_flaky', storeId: 'st_flaky' },
    });
    emu.ledger.advanceSlots(2);
    emu.ledger.finalize(); // the root is past the deposit's slot: a "not known" answer now would mean its fork was abandoned
    const short: Fault = { rewrite: (a) => ({ ...a, result: { ...(a.result as object), value: [] } }) };
    rpc.fail({ method: 'getSignatureStatuses', fault: [short, 'http500', 'malformed'] });
    const view = { rail: 'USDT_SOL' as const, environment: 'test' as const, connection: new Connection(rpc.url, { disableRetryOnRateLimit: true }), mint };
    const watch = new WatchSet('sol_ref', 'test');
    for (let i = 0; i < 3; i++) {
      await scanSolanaTick(pool, view, watch, null, Date.now());
      expect((await deposit(sig)).state).toBe('seen');
    }
    rpc.clear();
    await scanSolanaTick(pool, view, watch, null, Date.now());
    expect((await deposit(sig)).state).toBe('confirmed');
  }, 30_000);
});

describe('A payment link behind a flaky RPC (end to end)', () => {
  let rpc: FlakyRpc;
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    rpc = await startFlakyRpc(anvil.url);
    stack = await startStack({
      CHAIN_WATCHERS: 'on',
      CHAIN_POLL_MS: '100',
      RPC_URL_USDT_BSC_TEST: rpc.url,
      USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
      CONFIRMATIONS_USDT_BSC: '3',
    });
    const store = await stack.createStore('Flaky RPC shop');
    key = store.keys.test.secretKey;
    await connectAllRails(stack, store.clientId, 'test');
  }, 120_000);
  afterEach(() => rpc.clear());
  afterAll(async () => {
    await stack?.stop();
    await rpc?.close();
  });

  it('never takes a PROCESSING link back to PENDING on failed block reads, and confirms it once', async () => {
    const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '6', enabledRails: ['USDT_BSC'] } });
    expect(created.status).toBe(201);
    const link = created.body;
    const getLink = async () => (await stack.request({ method: 'GET', url: `/v1/payment-links/${link.id}`, key })).body;
    const tx = await usdt.transfer(payer, link.bscAddress, usdt18(6n));
    await mine(1);
    await eventually(async () => ((await getLink()).status === 'PROCESSING' ? true : undefined), 'PROCESSING', 30_000);
    const n = BigInt(
      await stack.pool.oneFirst(sql.type(z.object({ b: z.string() }))`SELECT block_number::text AS b FROM chain_deposits WHERE tx_hash = ${tx}`),
    );
    // The production client waits 20 s for an answer, so only the fast faults here.
    rpc.fail({ method: 'eth_getBlockByNumber', when: atBlock(n), fault: ['http500', 'malformed', 'null'] });
    const statuses = new Set<string>();
    const watching = (async () => {
      for (let i = 0; i < 40; i++) {
        statuses.add((await getLink()).status);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const failedBefore = rpc.calls.filter((c) => c.fault).length;
    await eventually(async () => (rpc.calls.filter((c) => c.fault).length >= failedBefore + 9 ? true : undefined), 'three ticks of failed reads', 30_000);
    await mine(3);
    await watching;
    expect([...statuses]).toEqual(['PROCESSING']);
    rpc.clear();
    rpc.fail({ method: 'eth_getBlockByNumber', every: 2, fault: ['http500', 'malformed', 'null'] });
    const done = await eventually(async () => {
      const l = await getLink();
      return l.status === 'CONFIRMED' ? l : undefined;
    }, 'CONFIRMED', 30_000);
    rpc.clear();
    expect(done.payments).toHaveLength(1);
    expect(done.payments[0]).toMatchObject({ externalId: tx, state: 'confirmed' });
    const deposits = await stack.pool.anyFirst(sql.type(z.object({ state: z.string() }))`SELECT state FROM chain_deposits WHERE tx_hash = ${tx}`);
    expect(deposits).toEqual(['confirmed']);
  }, 90_000);

  it('fails a tick it cannot run (no USDT contract configured) retryably, so the watcher waits instead of ending', async () => {
    // The watcher's activity retry policy has no attempt limit: only a non-retryable failure could end it.
    const chains = createChainActivities({ pool: stack.pool, config: stack.config, temporal: stack.temporal });
    await expect(chains.scanChainTick({ rail: 'USDT_POLYGON', environment: 'test', cursor: null })).rejects.toMatchObject({
      type: 'ChainNotConfigured',
      nonRetryable: false,
    });
  });
});
