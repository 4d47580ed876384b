import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mnemonicToAccount } from 'viem/accounts';
import type { CreatedStore } from '../../db/store-repo.js';
import { startTronGridEmulator, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { tronAddress, tronAddressFromBytes } from '../../rails/tron/address.js';
import { readTronHoldings, tronHoldersPerCall, tronMulticall3 } from '../../rails/tron/holdings.js';
import { connectAllRails, evmXpub, tronXpub } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Treasury balances on TRON (docs/treasury.md, "TRON") through the TronGrid emulator: Multicall3's
 * `aggregate3` by `/wallet/triggerconstantcontract`, the USDT and TRX balance of every handed-out
 * address in one constant call per `tronHoldersPerCall` holders, with the block it was read at.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const randomTron = () => tronAddressFromBytes(randomBytes(20));
/** The TRON address of a path of the test mnemonic (the public key's keccak tail, as rails/tron/address.ts writes it). */
const tronOf = (path: string) => tronAddress(Buffer.from(mnemonicToAccount(mnemonic, { path: path as `m/44'/60'/${string}` }).publicKey.slice(4), 'hex'));

const usdt = randomTron();
let tron: TronGridEmulator;
let bare: TronGridEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;

beforeAll(async () => {
  tron = await startTronGridEmulator();
  tron.addToken(usdt);
  tron.addMulticall3(tronMulticall3.test);
  // A node where no Multicall3 answers: the read fails rather than falling back to a request per address.
  bare = await startTronGridEmulator();
  bare.addToken(usdt);
  stack = await startStack({ RPC_URL_USDT_TRON_TEST: tron.url, USDT_CONTRACT_USDT_TRON_TEST: usdt });
  store = await stack.createStore('TRON treasury');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await tron?.close();
  await bare?.close();
});

const balances = (query: string) => stack.request({ method: 'GET', url: `/v1/treasury/balances${query}`, key });

describe('GET /v1/treasury/balances on TRON', () => {
  const links: { id: string; address: string }[] = [];
  let derived: string;

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_TRON'] } });
      expect(res.status).toBe(201);
      links.push({ id: res.body.id, address: res.body.tronAddress });
    }
    const res = await stack.request({ method: 'POST', url: '/v1/wallets/derive', key, payload: { index: 2 } });
    expect(res.status).toBe(200);
    derived = res.body.tron;
    tron.setBalance(usdt, links[0]!.address, 10_000_000n);
    tron.setBalance(usdt, links[1]!.address, 2_500_001n);
    tron.setBalance(usdt, derived, 700_000n);
    tron.setTrx(links[0]!.address, 1_500_000n);
    tron.setTrx(derived, 1n);
  }, 60_000);

  it('reads every address in one constant call: path, USDT and TRX balance, the totals and the block', async () => {
    const before = tron.calls;
    const res = await balances('?rail=USDT_TRON');
    expect(res.status).toBe(200);
    const rail = res.body.data[0];
    expect(rail).toMatchObject({
      rail: 'USDT_TRON', status: 'read', message: null, tokenSymbol: 'USDT', tokenDecimals: 6, tokenContract: usdt, nativeCoin: 'TRX',
      addressCount: 4, unreadCount: 0, totalToken: '13.200001', totalNative: '1.500001', nextCursor: null,
    });
    expect(rail.blockNumber).toBe(String(tron.chain.head.number));
    expect(rail.blockTime).toBe(new Date(Math.floor(tron.chain.head.timestampMs / 1000) * 1000).toISOString());
    expect(tron.calls - before).toBe(1);
    const all = [...links.map((l) => l.address), derived];
    expect(rail.addresses.map((a: { address: string }) => a.address)).toEqual([...all].sort());
    for (const a of rail.addresses) expect(tronOf(a.path)).toBe(a.address);
    const byAddress = new Map(rail.addresses.map((a: { address: string }) => [a.address, a]));
    expect(byAddress.get(links[0]!.address)).toMatchObject({ source: 'payment_link', ownerId: links[0]!.id, path: expect.stringMatching(/^m\/44'\/195'\/0'\/1\/\d+$/), tokenBalance: '10', nativeBalance: '1.5' });
    expect(byAddress.get(links[2]!.address)).toMatchObject({ tokenBalance: '0', nativeBalance: '0' });
    expect(byAddress.get(derived)).toMatchObject({ source: 'derived', ownerId: null, path: "m/44'/195'/0'/0/2", tokenBalance: '0.7', nativeBalance: '0.000001' });
  });

  it('says the read failed, guessing nothing, when the node has no Multicall3', async () => {
    const other = await startStack({ RPC_URL_USDT_TRON_TEST: bare.url, USDT_CONTRACT_USDT_TRON_TEST: usdt });
    try {
      const s = await other.createStore('TRON without Multicall3');
      await connectAllRails(other, s.clientId, 'test');
      const link = await other.request({ method: 'POST', url: '/v1/payment-links', key: s.keys.test.secretKey, payload: { usdtAmount: '1', enabledRails: ['USDT_TRON'] } });
      bare.setBalance(usdt, link.body.tronAddress, 5n);
      const rail = (await other.request({ method: 'GET', url: '/v1/treasury/balances?rail=USDT_TRON', key: s.keys.test.secretKey })).body.data[0];
      expect(rail).toMatchObject({ status: 'unavailable', unreadCount: 1, totalToken: '0', blockNumber: null });
      expect(rail.addresses[0].tokenBalance).toBeNull();
      expect(bare.calls).toBe(1);
    } finally {
      await other.stop();
    }
  }, 60_000);
});

describe('readTronHoldings (batching on the emulator)', () => {
  const many = Array.from({ length: 450 }, randomTron);

  it(`carries ${tronHoldersPerCall} holders a constant call, token and TRX together, in order`, async () => {
    tron.setBalance(usdt, many[0]!, 1n);
    tron.setBalance(usdt, many[449]!, 2n);
    tron.setTrx(many[300]!, 3n);
    const before = tron.calls;
    const read = await readTronHoldings(tron.url, tronMulticall3.test, usdt, many);
    expect(tron.calls - before).toBe(Math.ceil(450 / tronHoldersPerCall));
    expect(read.requests).toBe(Math.ceil(450 / tronHoldersPerCall));
    expect(read.token).toHaveLength(450);
    expect(read.token.filter((b) => b !== 0n)).toEqual([1n, 2n]);
    expect(read.token[449]).toBe(2n);
    expect(read.native.filter((b) => b !== 0n)).toEqual([3n]);
    expect(read.native[300]).toBe(3n);
  });

  it('leaves a holder unread (not zero) when the token contract does not answer its call', async () => {
    const read = await readTronHoldings(tron.url, tronMulticall3.test, randomTron(), many.slice(0, 3));
    expect(read.token).toEqual([undefined, undefined, undefined]);
    expect(read.native).toEqual([0n, 0n, 0n]);
  });
});
