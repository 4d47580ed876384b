import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WorkflowNotFoundError } from '@temporalio/client';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { connectAllRails, evmXpub, solanaWallet, tronXpub } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { chainWatcherWorkflowId } from '../../domain/workflow-contract.js';

let stack: Stack;
let store: CreatedStore;
let key: string;
const testSolanaMint = 'Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr';
const allRails = ['MOBILE_MONEY', 'USDT_TRON', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL'];

beforeAll(async () => {
  // A devnet USDT has no canonical mint: the operator names one (any base58 32-byte key here).
  // Polygon Amoy has no canonical test USDT either.
  stack = await startStack({ USDT_CONTRACT_USDT_SOL_TEST: testSolanaMint, USDT_CONTRACT_USDT_POLYGON_TEST: '0x000000000000000000000000000000000000dEaD' });
  store = await stack.createStore('Links');
  key = store.keys.test.secretKey;
  await connectAllRails(stack, store.clientId, 'test', { evm: evmXpub, tron: tronXpub });
});
afterAll(async () => stack?.stop());

const create = (payload: unknown, k = key, headers?: Record<string, string>) =>
  stack.request({ method: 'POST', url: '/v1/payment-links', key: k, payload, headers });

describe('POST /v1/payment-links', () => {
  it('creates a link on every rail with addresses from the link branch', async () => {
    const res = await create({
      usdtAmount: '10.50',
      enabledRails: allRails,
      description: 'Order 42',
      merchantRef: 'order-42',
      metadata: { cart: [1, 2], nested: { ok: true } },
    });
    expect(res.status).toBe(201);
    const link = res.body;
    expect(link).toMatchObject({
      status: 'PENDING',
      environment: 'test',
      usdtAmount: '10.5',
      mobileMoneyAmount: 1365, // 10.5 × 130, the fixed test rate
      kesPerUsdt: '130',
      enabledRails: allRails,
      mobileMoneyShortcode: '174379',
      description: 'Order 42',
      merchantRef: 'order-42',
      metadata: { cart: [1, 2], nested: { ok: true } },
      solanaAddress: solanaWallet,
      checkoutUrl: `http://malipo.test/p/${link.id}`,
    });
    expect(link.id).toMatch(/^pl_[0-9a-z]{24}$/);
    expect(link.tronAddress).toBe(deriveAddress(tronXpub, 'tron', 1, 0));
    expect(link.bscAddress).toBe(deriveAddress(evmXpub, 'evm', 1, 0));
    expect(link.ethAddress).toBe(link.bscAddress);
    expect(link.polygonAddress).toBe(link.bscAddress);
    expect(link.solanaPayUrl).toContain(`solana:${solanaWallet}?amount=10.5&spl-token=${testSolanaMint}`);
    expect(Date.parse(link.expiresAt) - Date.parse(link.createdAt)).toBeGreaterThan(1439 * 60_000);
    expect(link).not.toHaveProperty('confirmedRail');

    const second = await create({ usdtAmount: '1', enabledRails: ['USDT_TRON', 'USDT_BSC'] });
    expect(second.body.tronAddress).toBe(deriveAddress(tronXpub, 'tron', 1, 1));
    expect(second.body.bscAddress).toBe(deriveAddress(evmXpub, 'evm', 1, 1));
    expect(second.body).toMatchObject({ ethAddress: null, polygonAddress: null, solanaAddress: null, mobileMoneyAmount: null, mobileMoneyShortcode: null, metadata: null });
  });

  it('reads its writes: an immediate GET agrees with the create response', async () => {
    const created = (await create({ usdtAmount: '3', enabledRails: ['USDT_BSC'], expiresInMinutes: 5 })).body;
    const got = await stack.request({ method: 'GET', url: `/v1/payment-links/${created.id}`, key });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject(created);
    expect(got.body).toMatchObject({ confirmedRail: null, confirmedAt: null, externalId: null, payer: null, amountReceived: '0', payments: [] });
  });

  it('makes a mobile-money-only link without usdtAmount, converting at the locked rate', async () => {
    const res = await create({ mobileMoneyAmount: 100, enabledRails: ['MOBILE_MONEY'] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ mobileMoneyAmount: 100, usdtAmount: '0.769231', kesPerUsdt: '130', tronAddress: null });
  });

  it.each([
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC'], environment: 'live' }, 'environment', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC'], colour: 'red' }, 'colour', 'unknown_field'],
    [{ enabledRails: ['USDT_BSC'] }, 'usdtAmount', 'missing_field'],
    [{ usdtAmount: '1e3', enabledRails: ['USDT_BSC'] }, 'usdtAmount', 'invalid_field'],
    [{ usdtAmount: '0', enabledRails: ['USDT_BSC'] }, 'usdtAmount', 'invalid_field'],
    [{ usdtAmount: '1.1234567', enabledRails: ['USDT_BSC'] }, 'usdtAmount', 'invalid_field'],
    [{ usdtAmount: '1000000001', enabledRails: ['USDT_BSC'] }, 'usdtAmount', 'invalid_field'],
    [{ usdtAmount: 10, enabledRails: ['USDT_BSC'] }, 'usdtAmount', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: [] }, 'enabledRails', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC', 'USDT_BSC'] }, 'enabledRails', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['BTC'] }, 'enabledRails.0', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC'], expiresInMinutes: 0 }, 'expiresInMinutes', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC'], expiresInMinutes: 1.5 }, 'expiresInMinutes', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC'], expiresInMinutes: 43_201 }, 'expiresInMinutes', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 10.5 }, 'mobileMoneyAmount', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 250_001 }, 'mobileMoneyAmount', 'invalid_field'],
    [{ usdtAmount: '5000', enabledRails: ['MOBILE_MONEY'] }, 'usdtAmount', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC'], metadata: { big: 'x'.repeat(17_000) } }, 'metadata', 'invalid_field'],
    [{ usdtAmount: '1', enabledRails: ['USDT_BSC'], metadata: [1] }, 'metadata', 'invalid_field'],
  ].map(([payload, param, code]) => [param, code, payload] as const))('refuses a bad %s with %s and creates nothing', async (param, code, payload) => {
    const before = await countLinks();
    const res = await create(payload);
    expect(res.status).toBe(400);
    expect({ payload, error: res.body.error }).toMatchObject({ payload, error: { type: 'invalid_request_error', code, param } });
    expect(res.body.error.message.length).toBeGreaterThan(10);
    expect(await countLinks()).toBe(before);
  });

  it('refuses a rail the store has not connected, saying what to connect', async () => {
    const bare = await stack.createStore('Bare');
    const res = await create({ usdtAmount: '1', enabledRails: ['USDT_TRON'] }, bare.keys.test.secretKey);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'rail_not_available', param: 'enabledRails' });
    expect(res.body.error.message).toContain('TRON account xpub');
    // Connections are per environment: the live key of the main store has none.
    const live = await create({ usdtAmount: '1', enabledRails: ['USDT_BSC'] }, store.keys.live.secretKey);
    expect(live.body.error.code).toBe('rail_not_available');
  });

  it('offers a rail with no test token as simulated only: listed, accepted on a test link, paid by simulate-payment, never watched', async () => {
    const bare = await startStack({ CHAIN_WATCHERS: 'on' });
    try {
      const s = await bare.createStore('No Polygon or Solana test USDT');
      await connectAllRails(bare, s.clientId, 'test');
      await connectAllRails(bare, s.clientId, 'live');
      const chains = async (pk: string) =>
        (await bare.request({ method: 'GET', url: `/v1/chains/client/${s.clientId}?pk=${pk}` })).body.availableChains as { network: string; simulatedOnly?: boolean }[];
      const flagged = (list: { network: string; simulatedOnly?: boolean }[]) => list.filter((c) => c.simulatedOnly).map((c) => c.network);
      expect(flagged(await chains(s.keys.test.publishableKey))).toEqual(['USDT_POLYGON', 'USDT_SOL']);
      // Live mode has a token on every rail: nothing is simulated only there.
      expect(flagged(await chains(s.keys.live.publishableKey))).toEqual([]);

      const res = await bare.request({ method: 'POST', url: '/v1/payment-links', key: s.keys.test.secretKey, payload: { usdtAmount: '1', enabledRails: ['USDT_POLYGON', 'USDT_SOL'] } });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ enabledRails: ['USDT_POLYGON', 'USDT_SOL'], simulatedOnlyRails: ['USDT_POLYGON', 'USDT_SOL'], solanaPayUrl: null });
      const prefix = bare.config.temporal.taskQueuePrefix;
      for (const rail of ['USDT_POLYGON', 'USDT_SOL']) {
        await expect(bare.temporal.workflow.getHandle(chainWatcherWorkflowId(rail, 'test', prefix)).describe()).rejects.toThrow(WorkflowNotFoundError);
      }
      const paid = await bare.request({ method: 'POST', url: `/v1/payment-links/${res.body.id}/simulate-payment`, key: s.keys.test.secretKey, payload: { rail: 'USDT_SOL' } });
      expect(paid.body).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'USDT_SOL', simulated: true });

      // An invoice has no simulate-payment and no room to say "simulated only": it is still refused.
      const inv = await bare.request({ method: 'POST', url: '/v1/invoices', key: s.keys.test.secretKey, payload: { amount: '1', network: 'POLYGON' } });
      expect(inv.status).toBe(400);
      expect(inv.body.error).toMatchObject({ code: 'rail_not_available', param: 'network' });
      expect(inv.body.error.message).toContain('USDT_CONTRACT_USDT_POLYGON_TEST');
    } finally {
      await bare.stop();
    }
  });

  it('lists no rail as simulated only once its test token is configured', async () => {
    const res = await create({ usdtAmount: '1', enabledRails: ['USDT_POLYGON', 'USDT_SOL'] });
    expect(res.status).toBe(201);
    expect(res.body.simulatedOnlyRails).toEqual([]);
    expect(res.body.solanaPayUrl).toContain('spl-token=');
  });

  it('needs a secret key', async () => {
    await expectSecretKeyRequired(stack, { method: 'POST', url: '/v1/payment-links', payload: { usdtAmount: '1', enabledRails: ['USDT_BSC'] } });
  });
});

describe('Idempotency-Key', () => {
  it('replays the first answer for the same body and refuses another body', async () => {
    const headers = { 'idempotency-key': `idem-${Date.now()}` };
    const first = await create({ usdtAmount: '2', enabledRails: ['USDT_BSC'] }, key, headers);
    const again = await create({ usdtAmount: '2', enabledRails: ['USDT_BSC'] }, key, headers);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await create({ usdtAmount: '3', enabledRails: ['USDT_BSC'] }, key, headers);
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    const count = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM payment_links WHERE id = ${first.body.id}`);
    expect(count).toBe(1);
  });

  it('scopes keys to the store and environment', async () => {
    const headers = { 'idempotency-key': `scoped-${Date.now()}` };
    const other = await stack.createStore('Other idem');
    await connectAllRails(stack, other.clientId, 'test');
    const a = await create({ usdtAmount: '2', enabledRails: ['USDT_BSC'] }, key, headers);
    const b = await create({ usdtAmount: '2', enabledRails: ['USDT_BSC'] }, other.keys.test.secretKey, headers);
    expect(b.status).toBe(201);
    expect(b.body.id).not.toBe(a.body.id);
  });
});

describe('GET /v1/payment-links', () => {
  it('lists newest first with the envelope, filters by status and paginates', async () => {
    const s = await stack.createStore('Lister');
    await connectAllRails(stack, s.clientId, 'test');
    const k = s.keys.test.secretKey;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create({ usdtAmount: `${i + 1}`, enabledRails: ['USDT_BSC'] }, k)).body.id);
    await stack.request({ method: 'POST', url: `/v1/payment-links/${ids[0]}/cancel`, key: k });

    const page1 = await stack.request({ method: 'GET', url: '/v1/payment-links?limit=2', key: k });
    expect(page1.body).toMatchObject({ page: 1, limit: 2, total: 5, hasMore: true });
    expect(page1.body.data.map((l: { id: string }) => l.id)).toEqual([ids[4], ids[3]]);
    const page3 = await stack.request({ method: 'GET', url: '/v1/payment-links?limit=2&page=3', key: k });
    expect(page3.body).toMatchObject({ page: 3, total: 5, hasMore: false });
    expect(page3.body.data.map((l: { id: string }) => l.id)).toEqual([ids[0]]);
    const cancelled = await stack.request({ method: 'GET', url: '/v1/payment-links?status=CANCELLED', key: k });
    expect(cancelled.body.data.map((l: { id: string }) => l.id)).toEqual([ids[0]]);
    const deflt = await stack.request({ method: 'GET', url: '/v1/payment-links', key: k });
    expect(deflt.body.limit).toBe(20);
    // The live environment of the same store sees none of them.
    const live = await stack.request({ method: 'GET', url: '/v1/payment-links', key: s.keys.live.secretKey });
    expect(live.body).toMatchObject({ data: [], total: 0 });
  });

  it.each([['limit=0', 'limit'], ['limit=101', 'limit'], ['page=0', 'page'], ['limit=abc', 'limit'], ['status=PAID', 'status'], ['foo=1', 'foo']])(
    'refuses %s',
    async (qs, param) => {
      const res = await stack.request({ method: 'GET', url: `/v1/payment-links?${qs}`, key });
      expect(res.status).toBe(400);
      expect(res.body.error.param).toBe(param);
    },
  );
});

describe('GET /v1/payment-links/:id', () => {
  it("answers 404 for another store's link, another environment's link and malformed ids", async () => {
    const link = (await create({ usdtAmount: '1', enabledRails: ['USDT_BSC'] })).body;
    const other = await stack.createStore('Snoop');
    for (const [k, url] of [
      [other.keys.test.secretKey, `/v1/payment-links/${link.id}`],
      [store.keys.live.secretKey, `/v1/payment-links/${link.id}`],
      [key, '/v1/payment-links/pl_doesnotexist000000000000'],
      [key, '/v1/payment-links/not-an-id'],
    ] as const) {
      const res = await stack.request({ method: 'GET', url, key: k });
      expect({ url, status: res.status, type: res.body.error.type }).toEqual({ url, status: 404, type: 'not_found_error' });
    }
  });
});

describe('POST /v1/payment-links/:id/cancel', () => {
  it('cancels a PENDING link once; a second cancel is a 409', async () => {
    const link = (await create({ usdtAmount: '1', enabledRails: ['USDT_BSC'] })).body;
    const res = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/cancel`, key });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('CANCELLED');
    const again = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.id}/cancel`, key });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'conflict_error', code: 'invalid_state' });
    expect(again.body.error.message).toContain('CANCELLED');
  });
});

async function countLinks(): Promise<number> {
  return stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM payment_links`);
}
