import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { RateService } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Issue 12, item 3: free-form JSON (metadata) is limited in depth and size, and no body, however
 * deep or wide, reaches code that recurses on it: every such request is a 400 naming the field.
 */
let stack: Stack;
let store: CreatedStore;

beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Deep JSON');
  await connectAllRails(stack, store.clientId, 'test');
});
afterAll(async () => stack?.stop());

/** `levels` nested arrays as raw JSON text: 6,000 levels is 12 KB, far under the body limit. */
const deepArray = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
/** An object nested `levels` deep: 1 is `{"k":"v"}`. Built as a value, for depths JSON.stringify can take. */
const nested = (levels: number): Record<string, unknown> => (levels === 1 ? { k: 'v' } : { k: nested(levels - 1) });
const wide = (keys: number) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`key${i}`, `value${i}`]));

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  stack.request({ method: 'POST', url, key: store.keys.test.secretKey, payload, headers });
const linkBody = (metadata: string) => `{"usdtAmount":"1","enabledRails":["USDT_BSC"],"metadata":${metadata}}`;

function expectRefused(res: HttpResponse, param: string | undefined, message: RegExp) {
  expect({ status: res.status, type: res.body?.error?.type, param: res.body?.error?.param }).toEqual({ status: 400, type: 'invalid_request_error', param });
  expect(res.body.error.message).toMatch(message);
}

const tooDeep = /nested at most 20 levels deep/;

describe('payment-link and invoice metadata', () => {
  it('refuses metadata nested 6,000 levels with a 400 naming metadata, with or without an Idempotency-Key', async () => {
    const before = await stack.request({ method: 'GET', url: '/v1/payment-links', key: store.keys.test.secretKey });
    const body = linkBody(`{"a":${deepArray(6000)}}`);
    expect(Buffer.byteLength(body)).toBeLessThan(13_000);
    expectRefused(await post('/v1/payment-links', body), 'metadata', tooDeep);
    expectRefused(await post('/v1/payment-links', body, { 'idempotency-key': 'deep-1' }), 'metadata', tooDeep);
    const invoice = `{"amount":"1","network":"BSC","metadata":{"a":${deepArray(6000)}}}`;
    expectRefused(await post('/v1/invoices', invoice, { 'idempotency-key': 'deep-2' }), 'metadata', tooDeep);
    // Nothing was created, and the key is free for a good request.
    const after = await stack.request({ method: 'GET', url: '/v1/payment-links', key: store.keys.test.secretKey });
    expect(after.body.total).toBe(before.body.total);
    expect((await post('/v1/payment-links', linkBody('{"ok":true}'), { 'idempotency-key': 'deep-1' })).status).toBe(201);
  });

  it('takes metadata nested 20 levels and refuses 21, on links and invoices alike', async () => {
    const ok = await post('/v1/payment-links', { usdtAmount: '1', enabledRails: ['USDT_BSC'], metadata: nested(20) });
    expect(ok.status).toBe(201);
    expect(ok.body.metadata).toEqual(nested(20));
    expectRefused(await post('/v1/payment-links', { usdtAmount: '1', enabledRails: ['USDT_BSC'], metadata: nested(21) }), 'metadata', tooDeep);
    expectRefused(await post('/v1/invoices', { amount: '1', network: 'BSC', metadata: nested(21) }), 'metadata', tooDeep);
    expect((await post('/v1/invoices', { amount: '1', network: 'BSC', metadata: nested(20) })).status).toBe(201);
  });

  it('checks a wide object member by member: one deep member among hundreds, and the size over 16 KB', async () => {
    // Breadth costs nothing extra: the deep member is found whatever its neighbours.
    const crowd = { ...wide(500), last: nested(20) };
    expectRefused(await post('/v1/payment-links', { usdtAmount: '1', enabledRails: ['USDT_BSC'], metadata: crowd }, { 'idempotency-key': 'wide-1' }), 'metadata', tooDeep);
    expectRefused(await post('/v1/invoices', { amount: '1', network: 'BSC', metadata: crowd }), 'metadata', tooDeep);
    const big = wide(1500);
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(16 * 1024);
    expectRefused(await post('/v1/payment-links', { usdtAmount: '1', enabledRails: ['USDT_BSC'], metadata: big }, { 'idempotency-key': 'wide-2' }), 'metadata', /at most 16 KB/);
    expectRefused(await post('/v1/invoices', { amount: '1', network: 'BSC', metadata: big }), 'metadata', /at most 16 KB/);
    expectRefused(await post('/v1/payment-links', { usdtAmount: '1', enabledRails: ['USDT_BSC'], metadata: { list: Array(9000).fill(1) } }), 'metadata', /at most 16 KB/);
    // A wide body of fields nobody asked for is refused by its first unknown field.
    const res = await post('/v1/payment-links', { usdtAmount: '1', enabledRails: ['USDT_BSC'], ...wide(2000) }, { 'idempotency-key': 'wide-3' });
    expectRefused(res, 'key0', /Unknown field 'key0'/);
  });
});

describe('any JSON body', () => {
  it('refuses deep nesting in any field of any route with a 400 naming the field, never a 500', async () => {
    const deep = deepArray(6000);
    expectRefused(await post('/v1/payment-links', `{"usdtAmount":"1","enabledRails":${deep}}`, { 'idempotency-key': 'deep-3' }), 'enabledRails', tooDeep);
    expectRefused(await post('/v1/webhook-endpoints', `{"url":"https://shop.example/h","enabledEvents":${deep}}`, { 'idempotency-key': 'deep-4' }), 'enabledEvents', tooDeep);
    expectRefused(await post('/v1/wallets/derive', `{"index":${deep}}`), 'index', tooDeep);
    // Public routes and Daraja's callback: no key, the same answer.
    const callback = await stack.request({ method: 'POST', url: `/v1/callbacks/mpesa/${'a'.repeat(40)}`, payload: `{"Body":${deep}}` });
    expectRefused(callback, 'Body', tooDeep);
    // A key named `constructor` makes the parser scan the whole value for prototype poisoning first.
    expectRefused(await post('/v1/payment-links', linkBody(`{"constructor":{"a":${deep}}}`)), 'metadata', tooDeep);
    // The deepest body that fits the 64 KB limit, and not an object at all.
    expectRefused(await post('/v1/payment-links', deepArray(32_000), { 'idempotency-key': 'deep-5' }), undefined, /nested at most 21 levels deep/);
    // The dashboard's forms do not read JSON, but its routes see the body too.
    const dashboard = await stack.request({ method: 'POST', url: '/dashboard/login', payload: `{"email":"a@example.test","password":${deep}}` });
    expect(dashboard.status).toBe(400);
    expect(dashboard.text).toMatch(/nested at most 20 levels deep/);
    // The service is still there.
    expect((await stack.request({ method: 'GET', url: '/health' })).status).toBe(200);
  });

  it('reaches no logger or hash that recurses on the body, even with trace logging', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const rates = new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] });
    const app = await buildApp({ config: stack.config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates, logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const res = await httpCall(base, {
        method: 'POST',
        url: '/v1/payment-links',
        headers: { 'x-api-key': store.keys.test.secretKey, 'idempotency-key': 'deep-logged' },
        payload: linkBody(`{"a":${deepArray(6000)}}`),
      });
      expectRefused(res, 'metadata', tooDeep);
      expect(lines.join('')).not.toMatch(/RangeError|unhandled error/);
    } finally {
      await app.close();
    }
  });
});
