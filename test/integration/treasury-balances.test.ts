import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseEther, type Address } from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAddress } from 'viem/accounts';
import type { CreatedStore } from '../../db/store-repo.js';
import { holdersPerHoldingsCall, holdersPerRpcBatch, readEvmHoldings } from '../../rails/evm/holdings.js';
import { holdersPerDeploylessCall } from '../../rails/evm/balances.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { connectAllRails, evmXpub, tronXpub } from '../helpers/fixtures.js';
import { httpCall } from '../helpers/http.js';
import { deployMulticall3 } from '../helpers/multicall.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Treasury balances (docs/treasury.md) on real chains: BSC on an anvil with Multicall3 deployed
 * (as on every public network), Ethereum on an anvil without it (viem's deployless multicall and
 * JSON-RPC batches of eth_getBalance), Polygon pointed at a port nobody listens on. Each RPC goes
 * through a proxy that counts the HTTP requests and the JSON-RPC calls in them.
 */
const mnemonic = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

interface Counter {
  url: string;
  /** One entry per HTTP request: the JSON-RPC methods it carried (a batch carries many). */
  requests: string[][];
  close(): Promise<void>;
}

async function countingProxy(upstream: string): Promise<Counter> {
  const requests: string[][] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const body = JSON.parse(text) as { method: string } | { method: string }[];
        requests.push(Array.isArray(body) ? body.map((b) => b.method) : [body.method]);
      } catch {
        requests.push(['?']);
      }
      fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let bsc: Anvil;
let eth: Anvil;
let bscUsdt: TestToken;
let ethUsdt: TestToken;
let bscProxy: Counter;
let ethProxy: Counter;
let stack: Stack;
let store: CreatedStore;
let key: string;

const fund = (anvil: Anvil, to: Address, wei: bigint) => anvil.rpc('anvil_setBalance', [to, `0x${wei.toString(16)}`]);

beforeAll(async () => {
  bsc = await startAnvil();
  eth = await startAnvil();
  bscUsdt = await deployTestToken(bsc, { decimals: 18 });
  ethUsdt = await deployTestToken(eth, { decimals: 6 });
  await deployMulticall3(bsc);
  bscProxy = await countingProxy(bsc.url);
  ethProxy = await countingProxy(eth.url);
  stack = await startStack({
    USDT_CONTRACT_USDT_BSC_TEST: bscUsdt.address,
    RPC_URL_USDT_BSC_TEST: bscProxy.url,
    USDT_CONTRACT_USDT_ETH_TEST: ethUsdt.address,
    RPC_URL_USDT_ETH_TEST: ethProxy.url,
    USDT_CONTRACT_USDT_POLYGON_TEST: bscUsdt.address,
    RPC_URL_USDT_POLYGON_TEST: 'http://127.0.0.1:9',
    RPC_URL_USDT_TRON_TEST: 'http://127.0.0.1:9',
  });
  store = await stack.createStore('Treasury shop');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await bscProxy?.close();
  await ethProxy?.close();
  await bsc?.stop();
  await eth?.stop();
});

const balances = (query = '') => stack.request({ method: 'GET', url: `/v1/treasury/balances${query}`, key });

describe('GET /v1/treasury/balances', () => {
  const links: { id: string; address: Address }[] = [];
  let invoice: { id: string; address: Address };
  const derived: Address[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 4; i++) {
      const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'] } });
      expect(res.status).toBe(201);
      links.push({ id: res.body.id, address: res.body.bscAddress });
    }
    const inv = await stack.request({ method: 'POST', url: '/v1/invoices', key, payload: { amount: '5', network: 'BSC' } });
    expect(inv.status).toBe(201);
    invoice = { id: inv.body.id, address: inv.body.paymentAddress };
    for (const index of [0, 3]) {
      const res = await stack.request({ method: 'POST', url: '/v1/wallets/derive', key, payload: { index } });
      expect(res.status).toBe(200);
      derived.push(res.body.bsc);
    }
    // Paid: three links and a derived address on BSC, one link on Ethereum; gas on two of them.
    await bscUsdt.mint(links[0]!.address, 10n * 10n ** 18n);
    await bscUsdt.mint(links[1]!.address, 2_500_000_000_000_000_001n);
    await bscUsdt.mint(invoice.address, 5n * 10n ** 18n);
    await bscUsdt.mint(derived[1]!, 7n * 10n ** 17n);
    await fund(bsc, links[0]!.address, parseEther('0.0021'));
    await fund(bsc, derived[1]!, 1n);
    await ethUsdt.mint(links[2]!.address, 12_345_678n);
    await fund(eth, links[2]!.address, parseEther('0.5'));
  }, 60_000);

  it('answers a secret key only', async () => {
    await expectSecretKeyRequired(stack, { method: 'GET', url: '/v1/treasury/balances' });
  });

  it('reads each address on BSC in one batch, with its path, token and gas balance, and the total', async () => {
    const before = bscProxy.requests.length;
    const res = await balances('?rail=USDT_BSC');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const rail = res.body.data[0];
    expect(rail).toMatchObject({ rail: 'USDT_BSC', status: 'read', message: null, tokenSymbol: 'USDT', tokenDecimals: 18, nativeCoin: 'BNB', addressCount: 7, unreadCount: 0, nextCursor: null });
    expect(rail.totalToken).toBe('18.200000000000000001');
    expect(rail.totalNative).toBe('0.002100000000000001');
    const head = await bsc.publicClient.getBlock();
    expect(BigInt(rail.blockNumber)).toBe(head.number);
    expect(rail.blockTime).toBe(new Date(Number(head.timestamp) * 1000).toISOString());

    const all = [...links.map((l) => l.address), invoice.address, ...derived].map((a) => a.toLowerCase());
    expect(rail.addresses.map((a: { address: string }) => a.address)).toEqual([...all].sort());
    for (const a of rail.addresses) {
      // Each path derives its address from the store's mnemonic, and each balance is the chain's.
      expect(mnemonicToAccount(mnemonic, { path: a.path }).address.toLowerCase()).toBe(a.address);
      expect(a.tokenBalance).toBe(formatEighteen(await bscUsdt.balanceOf(a.address)));
      expect(a.nativeBalance).toBe(formatEighteen(await bsc.publicClient.getBalance({ address: a.address })));
    }
    const byAddress = new Map(rail.addresses.map((a: { address: string }) => [a.address, a]));
    expect(byAddress.get(links[0]!.address.toLowerCase())).toMatchObject({ source: 'payment_link', ownerId: links[0]!.id, tokenBalance: '10', nativeBalance: '0.0021' });
    expect(byAddress.get(invoice.address.toLowerCase())).toMatchObject({ source: 'invoice', ownerId: invoice.id, tokenBalance: '5', nativeBalance: '0' });
    expect(byAddress.get(derived[1]!.toLowerCase())).toMatchObject({ source: 'derived', ownerId: null, path: "m/44'/60'/0'/0/3", tokenBalance: '0.7', nativeBalance: '0.000000000000000001' });
    // The balances came in one eth_call (token and gas together), never a request per address.
    const made = bscProxy.requests.slice(before);
    expect(made.flat().filter((m) => m === 'eth_call')).toHaveLength(1);
    expect(made.flat()).not.toContain('eth_getBalance');
    expect(made.length).toBeLessThanOrEqual(3);
  });

  it('reads Ethereum without a deployed Multicall3: deployless token reads and one JSON-RPC batch of gas balances', async () => {
    const before = ethProxy.requests.length;
    const rail = (await balances('?rail=USDT_ETH')).body.data[0];
    expect(rail).toMatchObject({ rail: 'USDT_ETH', status: 'read', tokenDecimals: 6, nativeCoin: 'ETH', addressCount: 7, unreadCount: 0, totalToken: '12.345678', totalNative: '0.5' });
    const paid = rail.addresses.find((a: { address: string }) => a.address === links[2]!.address.toLowerCase());
    expect(paid).toMatchObject({ tokenBalance: '12.345678', nativeBalance: '0.5', path: expect.stringMatching(/^m\/44'\/60'\/0'\/1\/\d+$/) });
    const made = ethProxy.requests.slice(before);
    const batches = made.filter((r) => r.every((m) => m === 'eth_getBalance'));
    expect(batches).toEqual([Array(7).fill('eth_getBalance')]);
    expect(made.flat().filter((m) => m === 'eth_call')).toHaveLength(1);
  });

  it('pages a rail\'s addresses with a cursor, every address once, the totals on every page', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await balances(`?rail=USDT_BSC&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      const rail = res.body.data[0];
      expect(rail.totalToken).toBe('18.200000000000000001');
      expect(rail.addresses.length).toBeLessThanOrEqual(3);
      seen.push(...rail.addresses.map((a: { address: string }) => a.address));
      cursor = rail.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...new Set(seen)].sort());
    expect(seen).toHaveLength(7);
  });

  it('lists every rail without a filter: what it read, what failed, and why some rails have nothing to read', async () => {
    const res = await balances();
    expect(res.status).toBe(200);
    const byRail = Object.fromEntries(res.body.data.map((r: { rail: string }) => [r.rail, r]));
    expect(Object.keys(byRail).sort()).toEqual(['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL', 'USDT_TRON']);
    expect(byRail.USDT_BSC.status).toBe('read');
    expect(byRail.USDT_ETH.status).toBe('read');
    // Nobody listens on Polygon's RPC: no balance is guessed.
    expect(byRail.USDT_POLYGON).toMatchObject({ status: 'unavailable', unreadCount: 7, totalToken: '0', blockNumber: null });
    expect(byRail.USDT_POLYGON.addresses.every((a: { tokenBalance: unknown }) => a.tokenBalance === null)).toBe(true);
    expect(byRail.USDT_SOL).toMatchObject({ status: 'nothing_to_sweep', addresses: [] });
    expect(byRail.USDT_SOL.message).toMatch(/own wallet/);
    // TRON is read too (treasury-balances-tron.test.ts); nobody listens on its node here.
    expect(byRail.USDT_TRON).toMatchObject({ status: 'unavailable', nativeCoin: 'TRX', totalToken: '0', blockNumber: null });
  }, 60_000);

  it('refuses a bad rail, limit or cursor with the error shape', async () => {
    const cases: [string, string][] = [
      ['?rail=MOBILE_MONEY', 'rail'],
      ['?rail=NOPE', 'rail'],
      ['?rail=USDT_BSC&cursor=%%%', 'cursor'],
      ['?rail=USDT_BSC&cursor=Zm9v', 'cursor'],
      ['?cursor=YTow', 'cursor'],
      ['?rail=USDT_BSC&limit=0', 'limit'],
      ['?rail=USDT_BSC&limit=501', 'limit'],
    ];
    for (const [query, param] of cases) {
      const res = await balances(query);
      expect({ query, status: res.status, code: res.body.error?.code, param: res.body.error?.param }).toEqual({ query, status: 400, code: 'invalid_field', param });
      expect(res.body.error.type).toBe('invalid_request_error');
    }
  });

  it('shows the same on the dashboard Treasury page', async () => {
    const { cookie } = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'viewer'));
    const page = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/treasury?rail=USDT_BSC', headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.text).toContain('18.200000000000000001');
    expect(page.text).toContain(`data-address="${links[0]!.address.toLowerCase()}"`);
    expect(page.text).toContain("m/44&#39;/60&#39;/0&#39;/0/3");
    const every = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/treasury', headers: { cookie } });
    expect(every.status).toBe(200);
    expect(every.text).toContain('data-treasury-rail="USDT_SOL"');
    expect(every.text).toMatch(/own wallet/);
    const bad = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/treasury?rail=NOPE', headers: { cookie } });
    expect(bad.status).toBe(400);
  }, 60_000);
});

describe('readEvmHoldings (batching on anvil)', () => {
  const many = Array.from({ length: 600 }, () => privateKeyToAddress(generatePrivateKey()));

  beforeAll(async () => {
    await bscUsdt.mint(many[0]!, 1n);
    await bscUsdt.mint(many[599]!, 2n);
    await fund(bsc, many[300]!, 3n);
    await ethUsdt.mint(many[0]!, 4n);
    await fund(eth, many[599]!, 5n);
  });

  it(`carries ${holdersPerHoldingsCall} holders an eth_call where Multicall3 is deployed`, async () => {
    const before = bscProxy.requests.length;
    const read = await readEvmHoldings(bscProxy.url, bscUsdt.address, many);
    expect(read.token).toHaveLength(600);
    expect(read.token.filter((b) => b !== 0n)).toEqual([1n, 2n]);
    expect(read.token[599]).toBe(2n);
    expect(read.native.filter((b) => b !== 0n)).toEqual([3n]);
    expect(read.native[300]).toBe(3n);
    const calls = bscProxy.requests.slice(before).flat();
    expect(calls.filter((m) => m === 'eth_call')).toHaveLength(Math.ceil(600 / holdersPerHoldingsCall));
    expect(bscProxy.requests.length - before).toBe(read.requests);
  });

  it(`falls back to deployless reads and JSON-RPC batches of ${holdersPerRpcBatch} where it is not`, async () => {
    const before = ethProxy.requests.length;
    const read = await readEvmHoldings(ethProxy.url, ethUsdt.address, many);
    expect(read.token[0]).toBe(4n);
    expect(read.token.filter((b) => b !== 0n)).toEqual([4n]);
    expect(read.native[599]).toBe(5n);
    expect(read.native.filter((b) => b !== 0n)).toEqual([5n]);
    const made = ethProxy.requests.slice(before);
    expect(made.flat().filter((m) => m === 'eth_call')).toHaveLength(Math.ceil(600 / holdersPerDeploylessCall));
    expect(made.filter((r) => r[0] === 'eth_getBalance').map((r) => r.length)).toEqual([250, 250, 100]);
  });
});

function formatEighteen(wei: bigint): string {
  const whole = wei / 10n ** 18n;
  const frac = (wei % 10n ** 18n).toString().padStart(18, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}
