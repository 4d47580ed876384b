import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { CreatedStore } from '../../db/store-repo.js';
import { tronAddressFromBytes } from '../../rails/tron/address.js';
import { startTronGridEmulator, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { solidifyLag } from '../../emulators/trongrid/jsonrpc.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * The TRON watcher through TronGrid's `/jsonrpc` (emulated: the public TronGrid is out of reach
 * here). Confirmation waits for the solidified block, read from the solidity API
 * (`/walletsolidity/getnowblock`): the emulator refuses JSON-RPC's `finalized` tag here, as many
 * java-tron releases and providers do.
 */
const tronAddress = () => tronAddressFromBytes(randomBytes(20));
const usdtContract = tronAddress();
const payer = tronAddress();
let tron: TronGridEmulator;
let stack: Stack;
let store: CreatedStore;

beforeAll(async () => {
  tron = await startTronGridEmulator();
  tron.chain.finalizedTag = false;
  stack = await startStack({ CHAIN_WATCHERS: 'on', CHAIN_POLL_MS: '100', RPC_URL_USDT_TRON_TEST: tron.url, USDT_CONTRACT_USDT_TRON_TEST: usdtContract });
  store = await stack.createStore('TRON shop');
  await connectAllRails(stack, store.clientId, 'test');
});
afterAll(async () => {
  await stack?.stop();
  await tron?.close();
});

const key = () => store.keys.test.secretKey;
async function createLink(usdtAmount: string) {
  const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key: key(), payload: { usdtAmount, enabledRails: ['USDT_TRON'] } });
  expect(res.status).toBe(201);
  return res.body as { id: string; tronAddress: string };
}
const until = (id: string, check: (l: any) => boolean, what: string) =>
  eventually(async () => {
    const l = (await stack.request({ method: 'GET', url: `/v1/payment-links/${id}`, key: key() })).body;
    return check(l) ? l : undefined;
  }, what, 30_000);
const pay = (to: string, amount: bigint, contract = usdtContract) => tron.chain.mine(1, [{ contract, from: payer, to, amount }])[0]!;

describe('TRON watcher (TronGrid JSON-RPC)', () => {
  it('sees a TRC-20 deposit at once and confirms it when its block is solidified', async () => {
    const link = await createLink('15');
    const txid = pay(link.tronAddress, 15_000_000n);
    const seen = await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    expect(seen.payments[0]).toMatchObject({ rail: 'USDT_TRON', externalId: `0x${txid}`, payer, amount: '15', state: 'seen' });
    tron.chain.mine(solidifyLag - 1);
    await new Promise((r) => setTimeout(r, 500));
    expect((await until(link.id, () => true, 'read')).status).toBe('PROCESSING');
    tron.chain.mine(1);
    const done = await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED');
    expect(done).toMatchObject({ confirmedRail: 'USDT_TRON', payer, amountReceived: '15' });
  });

  it('ignores another TRC-20 contract and takes the link back to PENDING when a fork drops its deposit', async () => {
    const link = await createLink('3');
    pay(link.tronAddress, 3_000_000n, tronAddress());
    pay(link.tronAddress, 3_000_000n);
    await until(link.id, (l) => l.status === 'PROCESSING', 'PROCESSING');
    tron.chain.reorg(1);
    const back = await until(link.id, (l) => l.status === 'PENDING', 'PENDING after the fork');
    expect(back.payments).toHaveLength(1);
    expect(back.payments[0].state).toBe('dropped');
    pay(link.tronAddress, 3_000_000n);
    tron.chain.mine(solidifyLag);
    await until(link.id, (l) => l.status === 'CONFIRMED', 'CONFIRMED');
  });

  it('answers the documented JSON-RPC errors the watcher must live with', async () => {
    const call = async (method: string, params: unknown[]) =>
      (await fetch(`${tron.url}/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json();
    expect((await call('eth_getBlockByNumber', ['safe', false])).error).toMatchObject({ code: -32602 });
    expect((await call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x3000000' }])).error.message).toContain('exceed max block range');
    expect((await call('eth_getBlockByNumber', ['finalized', false])).error).toMatchObject({ code: -32602, message: 'invalid block number' });
    tron.chain.finalizedTag = true; // the releases that know the tag answer the solidified block
    try {
      const finalized = (await call('eth_getBlockByNumber', ['finalized', false])).result;
      const latest = (await call('eth_getBlockByNumber', ['latest', false])).result;
      expect(Number(latest.number) - Number(finalized.number)).toBe(solidifyLag);
      const solid = await (await fetch(`${tron.url}/walletsolidity/getnowblock`, { method: 'POST' })).json();
      expect(solid).toMatchObject({ blockID: finalized.hash.slice(2), block_header: { raw_data: { number: Number(finalized.number) } } });
    } finally {
      tron.chain.finalizedTag = false;
    }
  });
});
