import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { z } from 'zod';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { openPool } from '../../db/pool.js';
import { findHighestDerivedIndex } from '../../db/wallet-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { buildApp } from '../../runtime/http-app.js';
import { RateService } from '../../services/rates/rate-service.js';
import { fillIncompleteGaps, gapFillsSettled } from '../../services/wallets/derived-addresses.js';
import { httpCall } from '../helpers/http.js';
import { StatementCounter } from '../helpers/pg-statement-counter.js';
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
const registerAt = (clientId: string, kind: 'tron' | 'evm', xpub: string, key: string) =>
  stack.request({ method: 'PUT', url: `/v1/merchant/clients/${clientId}/wallets/${kind}`, payload: { xpub }, key });
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
    await gapFillsSettled();
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

  const rowsOf = async (storeId: string) =>
    stack.pool.any(sql.type(z.object({ family: z.string(), derived_index: z.number(), address: z.string(), handed_out: z.boolean() }))`
      SELECT family, derived_index, address, handed_out FROM derived_addresses
      WHERE store_id = ${storeId} AND environment = 'test' ORDER BY family, derived_index`);

  it('is one statement once the store\'s keys are known; its gap after the highest is written after the answer', async () => {
    const counter = await StatementCounter.start();
    const pool = await openPool(counter.urlFor(stack.config.databaseUrl!), 4, { preparedStatements: true });
    const app = await buildApp({
      config: stack.config, pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(),
      rates: new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] }),
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const other = await stack.createStore('Counted');
      const xpubs = randomAccountXpubs();
      const key = other.keys.test.secretKey;
      for (const [kind, xpub] of [['tron', xpubs.tron], ['evm', xpubs.evm]] as const) expect((await registerAt(other.clientId, kind, xpub, key)).status).toBe(200);
      const call = (index: number) => httpCall(base, { method: 'POST', url: '/v1/wallets/derive', payload: { index }, headers: { 'x-api-key': key } });
      // The first call learns the keys (and the API key): not counted.
      expect((await call(0)).status).toBe(200);
      await gapFillsSettled();
      // What fills the gap after the answer (findGaps, insertDerivedAddresses, pruneGap), counted apart.
      const fill = /AS present|EXCLUDED\.handed_out|DELETE FROM derived_addresses/;
      // A new highest, a repeated index, one inside the gap, a lower new one: one statement each on the request path.
      for (const [index, raises] of [[5, true], [5, false], [9, true], [2, false], [40, true]] as const) {
        const statements = await counter.during(async () => {
          const res = await call(index);
          expect(res.status).toBe(200);
          expect(res.body).toEqual({ index, tron: deriveAddress(xpubs.tron, 'tron', 0, index), bsc: deriveAddress(xpubs.evm, 'evm', 0, index) });
          await gapFillsSettled();
        });
        const answered = statements.filter((q) => !fill.test(q));
        expect(answered).toHaveLength(1);
        expect(answered[0]).toMatch(/INSERT INTO derived_addresses/);
        // Only a derive that raised the highest fills the gap.
        expect(statements.some((q) => fill.test(q))).toBe(raises);
      }
      // Every index handed out is watched, with the address of its index, and the gap follows the highest (40).
      const rows = await rowsOf(other.clientId);
      for (const family of ['evm', 'tron'] as const) {
        const mine = rows.filter((r) => r.family === family);
        expect(mine.filter((r) => r.handed_out).map((r) => r.derived_index)).toEqual([0, 2, 5, 9, 40]);
        expect(mine.filter((r) => !r.handed_out).map((r) => r.derived_index)).toEqual(Array.from({ length: 20 }, (_, i) => 41 + i));
        for (const r of mine) expect(r.address).toBe(deriveAddress(family === 'evm' ? xpubs.evm : xpubs.tron, family, 0, r.derived_index));
      }
    } finally {
      await app.close();
      await pool.end();
      await counter.close();
    }
  });

  it('answers from the key registered now when the key changed since the last derive, and watches that key\'s addresses', async () => {
    const other = await stack.createStore('Key swap');
    const key = other.keys.test.secretKey;
    const [first, second] = [randomAccountXpubs().evm, randomAccountXpubs().evm];
    await registerAt(other.clientId, 'evm', first, key);
    expect((await derive({ index: 3 }, key)).body.bsc).toBe(deriveAddress(first, 'evm', 0, 3));
    await gapFillsSettled();
    await registerAt(other.clientId, 'evm', second, key);
    // This process knew the first key: the statement finds it replaced, writes nothing for it, and the derive runs again.
    const res = await derive({ index: 3 }, key);
    expect(res.body).toEqual({ index: 3, tron: null, bsc: deriveAddress(second, 'evm', 0, 3), missing: ['TRON'] });
    await gapFillsSettled();
    const rows = await stack.pool.any(sql.type(z.object({ public_key: z.string(), handed_out: z.boolean(), n: z.number() }))`
      SELECT public_key, handed_out, count(*)::int AS n FROM derived_addresses WHERE store_id = ${other.clientId}
      GROUP BY public_key, handed_out ORDER BY public_key, handed_out`);
    // The second key: index 3 handed out and its 20 gap rows, written though the highest did not rise.
    expect(rows.filter((r) => r.public_key === second)).toEqual([
      { public_key: second, handed_out: false, n: 20 },
      { public_key: second, handed_out: true, n: 1 },
    ]);
    // Disconnected since: a 400, and nothing stored.
    expect((await stack.request({ method: 'DELETE', url: `/v1/merchant/clients/${other.clientId}/wallets/evm`, key })).status).toBeLessThan(300);
    const refused = await derive({ index: 99 }, key);
    expect(refused.body.error.code).toBe('wallet_not_connected');
    expect(await findHighestDerivedIndex(stack.pool, other.clientId, 'test')).toBe(3);
  });

  it('keeps every index handed out watched when derives racing past each other prune the gap', async () => {
    const other = await stack.createStore('Ascending');
    const key = other.keys.test.secretKey;
    const { evm } = randomAccountXpubs();
    await registerAt(other.clientId, 'evm', evm, key);
    // Ascending indexes, 8 at a time: each is inside the gap of an earlier highest that later fills prune.
    const indexes = Array.from({ length: 120 }, (_, i) => i);
    for (let at = 0; at < indexes.length; at += 8) {
      const answers = await Promise.all(indexes.slice(at, at + 8).map((index) => derive({ index }, key)));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    }
    await gapFillsSettled();
    const rows = await rowsOf(other.clientId);
    expect(rows.filter((r) => r.handed_out).map((r) => r.derived_index)).toEqual(indexes);
    expect(rows.filter((r) => !r.handed_out).map((r) => r.derived_index)).toEqual(Array.from({ length: 20 }, (_, i) => 120 + i));
    for (const r of rows) expect(r.address).toBe(deriveAddress(evm, 'evm', 0, r.derived_index));
  });

  it('fills a gap an answer\'s fill never wrote (a crash) at the worker\'s start sweep', async () => {
    const other = await stack.createStore('Lost gap');
    const key = other.keys.test.secretKey;
    const { evm } = randomAccountXpubs();
    await registerAt(other.clientId, 'evm', evm, key);
    expect((await derive({ index: 7 }, key)).status).toBe(200);
    await gapFillsSettled();
    await stack.pool.query(sql.unsafe`DELETE FROM derived_addresses WHERE store_id = ${other.clientId} AND NOT handed_out AND derived_index > 10`);
    expect(await fillIncompleteGaps(stack.pool)).toBeGreaterThanOrEqual(1);
    const rows = await rowsOf(other.clientId);
    expect(rows.map((r) => r.derived_index)).toEqual([7, ...Array.from({ length: 20 }, (_, i) => 8 + i)]);
    // Complete now: a second sweep finds nothing of this store.
    await fillIncompleteGaps(stack.pool);
    expect((await rowsOf(other.clientId)).length).toBe(21);
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
