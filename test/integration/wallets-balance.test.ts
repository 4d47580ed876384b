import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:net';
import type { CreatedStore } from '../../db/store-repo.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { startTronGridEmulator, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { deployTestToken, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * The balance endpoint against a real local EVM chain (anvil, with a USDT-like 18-decimal token
 * deployed here) and the TronGrid emulator. Test keys read the working endpoints; live keys are
 * pointed at failing ones to show a failure is a 502, never a balance.
 */
const evmXpub = 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt';
const tronXpub = 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd';
const tronToken = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
const liveTronToken = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

/** A port that was free a moment ago and has nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let anvil: Anvil;
let token: TestToken;
let trongrid: TronGridEmulator;
let stack: Stack;
let store: CreatedStore;
beforeAll(async () => {
  anvil = await startAnvil();
  token = await deployTestToken(anvil, { decimals: 18 });
  trongrid = await startTronGridEmulator();
  stack = await startStack({
    RPC_URL_USDT_BSC_TEST: anvil.url,
    USDT_CONTRACT_USDT_BSC_TEST: token.address,
    RPC_URL_USDT_TRON_TEST: trongrid.url,
    USDT_CONTRACT_USDT_TRON_TEST: tronToken,
    RPC_URL_USDT_BSC_LIVE: `http://127.0.0.1:${await closedPort()}`,
    RPC_URL_USDT_TRON_LIVE: trongrid.url,
    USDT_CONTRACT_USDT_TRON_LIVE: liveTronToken,
  });
  store = await stack.createStore('Acme');
  for (const env of ['test', 'live'] as const) {
    for (const [kind, xpub] of [['evm', evmXpub], ['tron', tronXpub]] as const) {
      const res = await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/${kind}`, payload: { xpub }, key: store.keys[env].secretKey });
      expect(res.status).toBe(200);
    }
  }
});
afterAll(async () => {
  await stack?.stop();
  await trongrid?.close();
  await anvil?.stop();
});

const balance = (index: number | string, network: string, key = store.keys.test.secretKey) =>
  stack.request({ method: 'GET', url: `/v1/wallets/derive/${index}/balance?network=${network}`, key });

describe('GET /v1/wallets/derive/:index/balance?network=BSC (anvil)', () => {
  it('reads balanceOf of the derived address from the chain, 18 decimals exact', async () => {
    const address = deriveAddress(evmXpub, 'evm', 0, 7) as `0x${string}`;
    expect((await balance(7, 'BSC')).body).toEqual({ index: 7, address, network: 'BSC', balance: '0' });
    await token.mint(address, 12_345_678_901_234_567_891n);
    expect((await balance(7, 'BSC')).body).toEqual({ index: 7, address, network: 'BSC', balance: '12.345678901234567891' });
    // Money moved by an ordinary transfer shows up too.
    await token.mint(anvil.accounts[1]!, 5n * 10n ** 18n);
    await token.transfer(anvil.accounts[1]!, address, 5n * 10n ** 17n);
    expect((await balance(7, 'BSC')).body.balance).toBe('12.845678901234567891');
    expect(await token.balanceOf(address)).toBe(12_845_678_901_234_567_891n);
    // The address is the one derive hands out for the same index.
    const derived = await stack.request({ method: 'POST', url: '/v1/wallets/derive', payload: { index: 7 }, key: store.keys.test.secretKey });
    expect(derived.body.bsc).toBe(address);
  });

  it('answers 502 when the node is unreachable, never a zero', async () => {
    const res = await balance(7, 'BSC', store.keys.live.secretKey);
    expect(res.status).toBe(502);
    expect(res.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_failed' });
    expect(res.body.error.message).toMatch(/Could not read the USDT balance from the BSC network/);
    expect(res.text).not.toContain('127.0.0.1');
    expect(res.body.balance).toBeUndefined();
  });
});

describe('GET /v1/wallets/derive/:index/balance?network=TRON (TronGrid emulator)', () => {
  it('answers 502 while the token contract does not exist, then reads the balance once it does', async () => {
    const address = deriveAddress(tronXpub, 'tron', 0, 3);
    expect(address).toBe('TRhVWK5XEDkQBDevcdCWW7RW51aRncty4W');
    const missing = await balance(3, 'TRON');
    expect(missing.status).toBe(502);
    expect(missing.body.error.code).toBe('upstream_failed');

    trongrid.addToken(tronToken);
    const callsBefore = trongrid.calls;
    expect((await balance(3, 'TRON')).body).toEqual({ index: 3, address, network: 'TRON', balance: '0' });
    trongrid.setBalance(tronToken, address, 1_234_567n);
    expect((await balance(3, 'TRON')).body).toEqual({ index: 3, address, network: 'TRON', balance: '1.234567' });
    trongrid.setBalance(tronToken, address, 2n ** 64n + 1n);
    expect((await balance(3, 'TRON')).body.balance).toBe('18446744073709.551617');
    expect(trongrid.calls).toBe(callsBefore + 3);
  });

  it("keeps environments apart: the live key reads the live contract's answer", async () => {
    // The live contract is not deployed on the emulator: a contract-validate error is a 502.
    const res = await balance(3, 'TRON', store.keys.live.secretKey);
    expect(res.status).toBe(502);
    trongrid.addToken(liveTronToken);
    trongrid.setBalance(liveTronToken, 'TRhVWK5XEDkQBDevcdCWW7RW51aRncty4W', 42_000_000n);
    expect((await balance(3, 'TRON', store.keys.live.secretKey)).body.balance).toBe('42');
    expect((await balance(3, 'TRON')).body.balance).toBe('18446744073709.551617');
  });
});

describe('balance request validation', () => {
  const cases: [string, string, number, string, string, RegExp][] = [
    ['no network', '/v1/wallets/derive/1/balance', 400, 'invalid_field', 'network', /Invalid 'network': must be TRON or BSC/],
    ['an unknown network', '/v1/wallets/derive/1/balance?network=ETH', 400, 'invalid_field', 'network', /must be TRON or BSC/],
    ['a negative index', '/v1/wallets/derive/-1/balance?network=BSC', 400, 'invalid_field', 'index', /must be an integer from 0 to 2147483647/],
    ['a hardened index', '/v1/wallets/derive/2147483648/balance?network=BSC', 400, 'invalid_field', 'index', /hardened indexes/],
    ['a non-integer index', '/v1/wallets/derive/1.5/balance?network=TRON', 400, 'invalid_field', 'index', /must be an integer/],
    ['an unknown query field', '/v1/wallets/derive/1/balance?network=TRON&currency=USD', 400, 'unknown_field', 'currency', /Unknown field 'currency'/],
  ];
  it.each(cases)('refuses %s', async (_what, url, status, code, param, message) => {
    const res = await stack.request({ method: 'GET', url, key: store.keys.test.secretKey });
    expect({ status: res.status, code: res.body.error.code, param: res.body.error.param }).toEqual({ status, code, param });
    expect(res.body.error.message).toMatch(message);
  });

  it('refuses a network whose xpub is not registered', async () => {
    const other = await stack.createStore('Tron only');
    // A key of its own: a key belongs to one store.
    await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${other.clientId}/wallets/tron`, payload: { xpub: randomAccountXpubs().tron }, key: other.keys.test.secretKey });
    const res = await balance(0, 'BSC', other.keys.test.secretKey);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'wallet_not_connected', param: 'network' });
    expect(res.body.error.message).toMatch(/No EVM xpub is registered in the test environment/);
  });

  it('needs a secret key', async () => {
    await expectSecretKeyRequired(stack, { method: 'GET', url: '/v1/wallets/derive/0/balance?network=BSC' });
  });
});
