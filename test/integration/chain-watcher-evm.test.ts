import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { getAddress, type Address } from 'viem';
import { z } from 'zod';
import { recordHandedOut } from '../../services/wallets/derived-addresses.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * The on-chain path end to end on a real local chain: anvil plays BSC (a USDT with 18 decimals,
 * confirmed at a depth of 3 blocks) and Ethereum (6 decimals, confirmed by anvil's `finalized`
 * tag, 64 blocks behind the head). Watchers, workflows and PostgreSQL are the real ones.
 */
let anvil: Anvil;
let bscUsdt: TestToken;
let ethUsdt: TestToken;
let stack: Stack;
let store: CreatedStore;
let key: string;
let xpubs: { evm: string; tron: string };
let payer: Address;

beforeAll(async () => {
  anvil = await startAnvil();
  bscUsdt = await deployTestToken(anvil, { decimals: 18 });
  ethUsdt = await deployTestToken(anvil, { decimals: 6 });
  payer = anvil.accounts[1]!;
  await bscUsdt.mint(payer, 10n ** 30n);
  await ethUsdt.mint(payer, 10n ** 15n);
  stack = await startStack({
    CHAIN_WATCHERS: 'on',
    CHAIN_POLL_MS: '100',
    RPC_URL_USDT_BSC_TEST: anvil.url,
    USDT_CONTRACT_USDT_BSC_TEST: bscUsdt.address,
    CONFIRMATIONS_USDT_BSC: '3',
    RPC_URL_USDT_ETH_TEST: anvil.url,
    USDT_CONTRACT_USDT_ETH_TEST: ethUsdt.address,
  });
  store = await stack.createStore('Chain shop');
  key = store.keys.test.secretKey;
  xpubs = await connectAllRails(stack, store.clientId, 'test');
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await anvil?.stop();
});

const usdt18 = (n: bigint) => n * 10n ** 18n;
const mine = (blocks: number) => anvil.rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
const getLink = async (id: string) => (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key })).body;
const until = (id: string, check: (l: any) => boolean, what: string) =>
  eventually(async () => {
    const l = await getLink(id);
    return check(l) ? l : undefined;
  }, what, 30_000);

async function createLink(payload: Record<string, unknown>) {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload });
  expect(res.status).toBe(201);
  return res.body;
}

describe('BSC watcher (depth 3)', () => {
  it('shows a deposit as PROCESSING at once and CONFIRMED at depth, with the tx hash and sender', async () => {
    const link = await createLink({ usdtAmount: '10', enabledRails: ['USDT_BSC'], merchantRef: 'chain-1' });
    // Paid at once: the watcher's first tick looks back far enough to find it.
    const tx = await bscUsdt.transfer(payer, link.bscAddress, usdt18(10n));
    const seen = await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    expect(seen.payments[0]).toMatchObject({ rail: 'USDT_BSC', externalId: tx, state: 'seen', amount: '10' });
    await mine(2);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED');
    expect(done).toMatchObject({ confirmedRail: 'USDT_BSC', externalId: tx, payer: getAddress(payer), amountReceived: '10' });
  });

  it('takes a link back to PENDING when a reorg drops its deposit, and confirms the re-sent one', async () => {
    const link = await createLink({ usdtAmount: '5', enabledRails: ['USDT_BSC'] });
    await bscUsdt.transfer(payer, link.bscAddress, usdt18(5n));
    await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    await anvil.rpc('anvil_reorg', [1, []]);
    const back = await until(link.id, (l) => l.status === 'PENDING', 'PENDING after the reorg');
    expect(back.payments[0]).toMatchObject({ state: 'dropped' });
    const tx = await bscUsdt.transfer(payer, link.bscAddress, usdt18(5n));
    await mine(3);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED');
    expect(done.externalId).toBe(tx);
  });

  it('ignores other tokens, zero transfers and unwatched addresses; adds up partial payments', async () => {
    const link = await createLink({ usdtAmount: '3', enabledRails: ['USDT_BSC'] });
    const fake = await deployTestToken(anvil, { decimals: 18 });
    await fake.mint(payer, usdt18(100n));
    await fake.transfer(payer, link.bscAddress, usdt18(3n));
    await bscUsdt.transfer(payer, link.bscAddress, 0n);
    await bscUsdt.transfer(payer, anvil.accounts[5]!, usdt18(3n));
    await bscUsdt.transfer(payer, link.bscAddress, usdt18(1n));
    await mine(3);
    // The amount is written before the link leaves PROCESSING (two steps of the workflow): wait
    // for the link to settle, then it must be waiting for the rest, not confirmed.
    const partial = await until(link.id, (l) => l.amountReceived === '1' && l.status !== 'PROCESSING', 'one USDT received, settled');
    expect(partial.status).toBe('PENDING');
    expect(partial.payments).toHaveLength(1);
    await bscUsdt.transfer(payer, link.bscAddress, usdt18(2n));
    await mine(3);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED');
    expect(done.amountReceived).toBe('3');
  });

  it('confirms many links paid in the same blocks', async () => {
    const links = [];
    for (let i = 0; i < 12; i++) links.push(await createLink({ usdtAmount: `${i + 1}`, enabledRails: ['USDT_BSC'] }));
    for (const [i, l] of links.entries()) await bscUsdt.transfer(payer, l.bscAddress, usdt18(BigInt(i + 1)));
    await mine(3);
    for (const l of links) await until(l.id, (x) => x.status === 'CONFIRMED', `${l.id} CONFIRMED`);
  });

  it('resumes from its cursor after the workers were down, finding the transfer made meanwhile', async () => {
    const link = await createLink({ usdtAmount: '7', enabledRails: ['USDT_BSC'] });
    let tx = '';
    await stack.restartWorkers(async () => {
      tx = await bscUsdt.transfer(payer, link.bscAddress, usdt18(7n));
      await mine(5);
    });
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED after restart');
    expect(done.externalId).toBe(tx);
  });

  it('emits transfer.confirmed once for a deposit to a derived receive address', async () => {
    // What POST /v1/wallets/derive {"index": 4} records, its gap included (the route would also start a TRON watcher).
    await recordHandedOut(stack.pool, store.clientId, 'test', 4);
    // A link on BSC keeps the BSC watcher running for this environment.
    await createLink({ usdtAmount: '1', enabledRails: ['USDT_BSC'] });
    const address = deriveAddress(xpubs.evm, 'evm', 0, 7); // within highest index 4 + gap 20
    const tx = await bscUsdt.transfer(payer, address as Address, usdt18(25n) / 10n);
    await mine(3);
    const event = await eventually(async () => {
      const rows = await stack.pool.any(sql.type(z.object({ payload: z.any() }))`
        SELECT payload FROM events WHERE type = 'transfer.confirmed' AND payload->'data'->>'txHash' = ${tx}`);
      return rows.length ? rows : undefined;
    }, 'transfer.confirmed');
    expect(event).toHaveLength(1);
    expect(event[0]!.payload).toMatchObject({
      type: 'transfer.confirmed',
      environment: 'test',
      data: { network: 'BSC', index: 7, address, txHash: tx, from: getAddress(payer), amount: '2.5' },
    });
    expect(event[0]!.payload.data.confirmations).toBeGreaterThanOrEqual(3);
    expect(event[0]!.payload.id).toMatch(/^evt_/);
  });
});

describe('Ethereum watcher (finalized tag)', () => {
  it('waits for the finalized block before confirming', async () => {
    const link = await createLink({ usdtAmount: '4', enabledRails: ['USDT_ETH'] });
    await ethUsdt.transfer(payer, link.ethAddress, 4_000_000n);
    await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    await mine(10);
    await new Promise((r) => setTimeout(r, 500));
    expect((await getLink(link.id)).status).toBe('PROCESSING');
    await mine(64);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED once finalized');
    expect(done.confirmedRail).toBe('USDT_ETH');
  });
});
