import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { findHighestDerivedIndex } from '../../db/wallet-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

const evmXpub = 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt';
const tronXpub = 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd';

// research/chains.md §1: receive addresses of the abandon…about account keys.
const vectors: [number, string, string][] = [
  [0, 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94'],
  [1, 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK', '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0'],
  [20, 'TQNiYx8GwBCA3C3Gk1jFi2x59dLH2dnqz6', '0x0f7479EC9cB833971eE60A4B09d7E048f689029B'],
  [2147483647, 'TVapZk5c7S7ARtSBi9jD13rhkbZke4F4sa', '0x8848bfC75a28756B521b09afDC120BdDddC7d7c9'],
];

let stack: Stack;
let store: CreatedStore;
beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Acme');
});
afterAll(async () => stack?.stop());

const derive = (payload: unknown, key = store.keys.test.secretKey) => stack.request({ method: 'POST', url: '/v1/wallets/derive', payload, key });
const register = (kind: 'tron' | 'evm', xpub: string, key = store.keys.test.secretKey) =>
  stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/${kind}`, payload: { xpub }, key });
const highest = (env: 'test' | 'live' = 'test') => findHighestDerivedIndex(stack.pool, store.clientId, env);

describe('POST /v1/wallets/derive', () => {
  it('refuses when no TRON or EVM xpub is registered, and stores nothing', async () => {
    const res = await derive({ index: 3 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'wallet_not_connected' });
    expect(res.body.error.message).toMatch(/No TRON or EVM xpub is registered in the test environment: register one with PUT \/v1\/merchant/);
    expect(await highest()).toBeNull();
  });

  it('with only the EVM xpub: the BSC address, TRON null and named as missing', async () => {
    expect((await register('evm', evmXpub)).status).toBe(200);
    const res = await derive({ index: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ index: 1, tron: null, bsc: '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0', missing: ['TRON'] });
    expect(await highest()).toBe(1);
  });

  it('with both xpubs: the published receive addresses, the same on every call', async () => {
    expect((await register('tron', tronXpub)).status).toBe(200);
    for (const [index, tron, bsc] of vectors) {
      const first = await derive({ index });
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ index, tron, bsc });
      expect((await derive({ index })).body).toEqual(first.body);
    }
  });

  it('stores which indexes were handed out, and the 20 after the highest only while they are after it', async () => {
    const rows = await stack.pool.any(sql.type(z.object({ family: z.string(), handed_out: z.boolean(), indexes: z.array(z.number()) }))`
      SELECT family, handed_out, array_agg(derived_index ORDER BY derived_index) AS indexes FROM derived_addresses
      WHERE store_id = ${store.clientId} AND environment = 'test' GROUP BY family, handed_out ORDER BY family, handed_out`);
    // Indexes 1, 0, 1, 20, 2147483647 were derived; nothing follows the last one, so no gap is left.
    expect(rows).toEqual([
      { family: 'evm', handed_out: true, indexes: [0, 1, 20, 2147483647] },
      { family: 'tron', handed_out: true, indexes: [0, 1, 20, 2147483647] },
    ]);
  });

  it('raises the highest derived index per environment and never lowers it', async () => {
    expect(await highest()).toBe(2147483647);
    // The live environment has no keys and no mark of its own.
    expect((await derive({ index: 5 }, store.keys.live.secretKey)).body.error.code).toBe('wallet_not_connected');
    expect(await highest('live')).toBeNull();
    await register('tron', tronXpub, store.keys.live.secretKey);
    const live = await derive({ index: 19 }, store.keys.live.secretKey);
    expect(live.body).toEqual({ index: 19, tron: 'TVVrjiM1MuVzeczUHzSAnmAipW7qAX2gRL', bsc: null, missing: ['BSC'] });
    expect(await highest('live')).toBe(19);
    expect((await derive({ index: 4 }, store.keys.live.secretKey)).status).toBe(200);
    expect(await highest('live')).toBe(19);
    expect(await highest('test')).toBe(2147483647);
  });

  it('keeps the largest index when many derivations race', async () => {
    const other = await stack.createStore('Racer');
    // A key of its own: a key belongs to one store.
    await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${other.clientId}/wallets/evm`, payload: { xpub: randomAccountXpubs().evm }, key: other.keys.test.secretKey });
    const indexes = Array.from({ length: 40 }, (_, i) => (i * 7919) % 1000);
    const answers = await Promise.all(indexes.map((index) => derive({ index }, other.keys.test.secretKey)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(await findHighestDerivedIndex(stack.pool, other.clientId, 'test')).toBe(Math.max(...indexes));
  });

  const invalid: [string, unknown, string, RegExp][] = [
    ['a negative index', { index: -1 }, 'invalid_field', /Invalid 'index': must be an integer from 0 to 2147483647 \(hardened indexes, 2\^31 and above, need the private key\)/],
    ['a fraction', { index: 1.5 }, 'invalid_field', /must be an integer from 0 to 2147483647/],
    ['a hardened index', { index: 2 ** 31 }, 'invalid_field', /hardened indexes, 2\^31 and above, need the private key/],
    ['a string', { index: '1' }, 'invalid_field', /must be an integer from 0/],
    ['null', { index: null }, 'invalid_field', /must be an integer from 0/],
    ['no index', {}, 'missing_field', /Missing required field 'index'/],
    ['an unknown field', { index: 1, user: 'u_1' }, 'unknown_field', /Unknown field 'user'/],
  ];
  it.each(invalid)('refuses %s with a 400 naming the field, and stores nothing', async (_what, payload, code, message) => {
    const other = await stack.createStore('Untouched');
    await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${other.clientId}/wallets/tron`, payload: { xpub: randomAccountXpubs().tron }, key: other.keys.test.secretKey });
    const res = await derive(payload, other.keys.test.secretKey);
    expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 400, code });
    expect(res.body.error.param).toBe(code === 'unknown_field' ? 'user' : 'index');
    expect(res.body.error.message).toMatch(message);
    expect(await findHighestDerivedIndex(stack.pool, other.clientId, 'test')).toBeNull();
  });

  it('needs a secret key', async () => {
    await expectSecretKeyRequired(stack, { method: 'POST', url: '/v1/wallets/derive', payload: { index: 0 } });
  });
});
