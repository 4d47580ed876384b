import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import type { CreatedStore } from '../../db/store-repo.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let store: CreatedStore;
beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Acme');
});
afterAll(async () => stack?.stop());

describe('GET /v1/chains', () => {
  it('lists all six rails with logos served by the service', async () => {
    const res = await stack.request({ method: 'GET', url: '/v1/chains' });
    expect(res.status).toBe(200);
    expect(res.body.chains.map((c: { network: string }) => c.network)).toEqual([
      'MOBILE_MONEY', 'USDT_TRON', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL',
    ]);
    const logo = await stack.request({ method: 'GET', url: new URL(res.body.chains[1].chainLogoUrl).pathname });
    expect(logo.status).toBe(200);
    expect(logo.headers['content-type']).toBe('image/svg+xml');
  });

  it('rate-limits at 120 requests per minute per IP with Retry-After', async () => {
    let last = await stack.request({ method: 'GET', url: '/health' });
    for (let i = 0; i < 121; i++) {
      last = await stack.request({ method: 'GET', url: '/v1/chains', localAddress: '127.0.0.9' });
      if (i < 120) expect(last.status).toBe(200);
    }
    expect(last.status).toBe(429);
    expect(last.body.error.type).toBe('rate_limit_error');
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
    expect(last.headers['ratelimit-limit']).toBe('120');
    // Another IP is not affected.
    expect((await stack.request({ method: 'GET', url: '/v1/chains', localAddress: '127.0.0.10' })).status).toBe(200);
  });
});

describe('GET /v1/chains/client/:clientId', () => {
  const url = () => `/v1/chains/client/${store.clientId}?pk=${store.keys.test.publishableKey}`;

  it('shows only what the store connected, per environment', async () => {
    let res = await stack.request({ method: 'GET', url: url() });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ clientId: store.clientId, clientName: 'Acme', environment: 'test', availableChains: [] });

    await stack.pool.query(sql.unsafe`INSERT INTO store_wallets (store_id, environment, kind, public_key)
      VALUES (${store.clientId}, 'test', 'evm', 'xpub-test'), (${store.clientId}, 'live', 'tron', 'xpub-live')`);
    await stack.pool.query(sql.unsafe`INSERT INTO mobile_money_connections
      (store_id, environment, shortcode, consumer_key_enc, consumer_secret_enc, passkey_enc)
      VALUES (${store.clientId}, 'test', '174379', 'x', 'x', 'x')`);
    res = await stack.request({ method: 'GET', url: url() });
    expect(res.body.availableChains.map((c: { network: string }) => c.network)).toEqual([
      'MOBILE_MONEY', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON',
    ]);
    const live = await stack.request({ method: 'GET', url: `/v1/chains/client/${store.clientId}?pk=${store.keys.live.publishableKey}` });
    expect(live.body.environment).toBe('live');
    expect(live.body.availableChains.map((c: { network: string }) => c.network)).toEqual(['USDT_TRON']);
  });

  it('refuses a missing, malformed, unknown or secret key and another store', async () => {
    const other = await stack.createStore('Other');
    const cases: [string, number, string][] = [
      [`/v1/chains/client/${store.clientId}`, 401, 'missing_api_key'],
      [`/v1/chains/client/${store.clientId}?pk=nope`, 401, 'invalid_api_key'],
      [`/v1/chains/client/${store.clientId}?pk=pk_test_${'0'.repeat(32)}`, 401, 'invalid_api_key'],
      [`/v1/chains/client/${store.clientId}?pk=${store.keys.test.secretKey}`, 403, 'wrong_key_kind'],
      [`/v1/chains/client/${store.clientId}?pk=${other.keys.test.publishableKey}`, 404, 'not_found'],
    ];
    for (const [u, status, code] of cases) {
      const res = await stack.request({ method: 'GET', url: u });
      expect({ u, status: res.status, code: res.body.error.code }).toEqual({ u, status, code });
      expect(JSON.stringify(res.body)).not.toContain(store.keys.test.secretKey);
    }
  });
});

describe('errors and request ids', () => {
  it('echoes x-request-id and puts it in the error body', async () => {
    const res = await stack.request({ method: 'GET', url: '/v1/nope', headers: { 'x-request-id': 'abc-123' } });
    expect(res.status).toBe(404);
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect(res.body).toEqual({ error: { type: 'not_found_error', code: 'not_found', message: 'No route GET /v1/nope.', requestId: 'abc-123' } });
  });

  it('generates a request id when none is sent', async () => {
    const res = await stack.request({ method: 'GET', url: '/v1/chains' });
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-z]{24}$/);
  });

  it('serves the API reference page, drawn in the browser from the same document (test/e2e/api-reference.test.ts)', async () => {
    const res = await stack.request({ method: 'GET', url: '/docs' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.text).toContain('data-spec-url="/v1/openapi.json"');
    expect(res.text).toMatch(/<script src="\/docs\/redoc\/[\d.]+\/redoc\.standalone\.js"><\/script>/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['content-security-policy']).not.toMatch(/https?:/);
  });

  it('serves the pages\' assets with ETags, fingerprinted ones as immutable for a year', async () => {
    const page = (await stack.request({ method: 'GET', url: '/docs' })).text;
    const css = /href="(\/assets\/[0-9a-f]{12}\/docs\/docs\.css)"/.exec(page)![1]!;
    const res = await stack.request({ method: 'GET', url: css });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/css');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const again = await stack.request({ method: 'GET', url: css, headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.status).toBe(304);
    // The plain path keeps working (rail logos, bookmarks), cached for a day.
    const plain = await stack.request({ method: 'GET', url: '/static/docs/docs.css' });
    expect(plain.status).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=86400');
    expect(plain.text).toBe(res.text);
    // Another hash still gets the file, but uncacheable; no path outside web/static resolves.
    const stale = await stack.request({ method: 'GET', url: css.replace(/[0-9a-f]{12}/, '000000000000') });
    expect(stale.status).toBe(200);
    expect(stale.headers['cache-control']).toBe('public, max-age=0');
    for (const url of ['/assets/000000000000/../../package.json', '/static/../package.json', '/static/%2e%2e/package.json', '/assets/x/nope.css']) {
      expect((await stack.request({ method: 'GET', url })).status).toBe(404);
    }
  });

  it('serves an OpenAPI 3.1 document listing every route', async () => {
    const res = await stack.request({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/v1/chains', '/v1/chains/client/{clientId}']));
  });
});

describe('stored keys', () => {
  it('keeps only hashes of secret keys', async () => {
    const rows = await stack.pool.any(sql.unsafe`SELECT key_hash, publishable_key, last4 FROM api_keys WHERE store_id = ${store.clientId}`);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(store.keys.test.secretKey);
    expect(dump).not.toContain(store.keys.live.secretKey);
    expect(dump).toContain(store.keys.test.publishableKey);
  });
});
