import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { RateService } from '../../activities/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { loginAttemptsPerMinute } from '../../web/dashboard/login.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Dashboard sessions over plain HTTP: what a browser would add nothing to. */
let stack: Stack;
let store: CreatedStore;
beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Session Shop');
});
afterAll(async () => {
  await stack?.stop();
});

const formHeaders = (origin = stack.baseUrl) => ({ 'content-type': 'application/x-www-form-urlencoded', origin });

function signIn(key: string, opts: { ip?: string; origin?: string; base?: string } = {}): Promise<HttpResponse> {
  return httpCall(opts.base ?? stack.baseUrl, {
    method: 'POST', url: '/dashboard/login', payload: new URLSearchParams({ secretKey: key }).toString(),
    headers: formHeaders(opts.origin ?? opts.base ?? stack.baseUrl), localAddress: opts.ip,
  });
}

/** The session token from Set-Cookie, and the whole header for its attributes. */
function sessionCookieOf(res: HttpResponse): { token: string; header: string } {
  const header = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('malipo_dashboard='));
  if (!header) throw new Error(`no session cookie (status ${res.status})`);
  return { token: header.slice('malipo_dashboard='.length).split(';')[0]!, header };
}

async function session(key = store.keys.test.secretKey): Promise<string> {
  const res = await signIn(key);
  expect([res.status, res.headers.location]).toEqual([303, '/dashboard']);
  return sessionCookieOf(res).token;
}

const page = (token: string, url = '/dashboard') => stack.request({ method: 'GET', url, headers: { cookie: `malipo_dashboard=${token}` } });
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1];
const sha256 = (s: string) => createHash('sha256').update(s).digest();

const sessionRows = (storeId: string) =>
  stack.pool.any(sql.type(z.object({ token_hash: z.instanceof(Buffer), environment: z.string(), key_id: z.string(), lifetime_s: z.number(), revoked: z.boolean(), row: z.string() }))`
    SELECT token_hash, environment, key_id, extract(epoch FROM expires_at - created_at)::int AS lifetime_s,
           revoked_at IS NOT NULL AS revoked, row_to_json(s)::text AS row
    FROM dashboard_sessions s WHERE store_id = ${storeId} ORDER BY created_at`);

describe('dashboard sign-in', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and stores only its SHA-256, never the key', async () => {
    const s = await stack.createStore('Cookie Shop');
    const res = await signIn(s.keys.test.secretKey);
    expect(res.status).toBe(303);
    const { token, header } = sessionCookieOf(res);
    expect(header).toMatch(/; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict$/);
    expect(header).not.toContain('Secure');
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await sessionRows(s.clientId);
    expect(row!.token_hash.equals(sha256(token))).toBe(true);
    expect(row).toMatchObject({ environment: 'test', key_id: expect.stringMatching(/^key_/), lifetime_s: 12 * 3600, revoked: false });
    expect(row!.row).not.toContain(s.keys.test.secretKey);
    expect(row!.row).not.toContain(token);
    const overview = await page(token);
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Cookie Shop');
    expect(overview.text).not.toContain(s.keys.test.secretKey);
  });

  it('refuses a wrong, publishable or malformed key with the API message and opens no session', async () => {
    const s = await stack.createStore('Refusals');
    const cases: [string, number, string][] = [
      [`sk_test_${'x'.repeat(40)}`, 401, 'The API key is unknown: check that it was copied whole.'],
      [s.keys.test.publishableKey, 403, 'a publishable key (pk_…) was pasted'],
      ['hello', 401, 'The API key is not valid. Secret keys start with sk_test_ or sk_live_.'],
      ['', 401, 'Paste your secret API key'],
    ];
    for (const [key, status, message] of cases) {
      const res = await signIn(key, { ip: '127.0.3.1' });
      expect({ key, status: res.status }).toEqual({ key, status });
      expect(res.text).toContain(message.replace(/'/g, '&#39;'));
      expect(res.headers['set-cookie']).toBeUndefined();
      if (key) expect(res.text).not.toContain(key);
    }
    expect(await sessionRows(s.clientId)).toEqual([]);
  });

  it('refuses a sign-in posted from another site', async () => {
    const res = await signIn(store.keys.test.secretKey, { origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('limits sign-in attempts per IP; a right key is refused too while limited, other IPs are not', async () => {
    const wrong = `sk_test_${'y'.repeat(40)}`;
    /** Attempts until the first 429; fixed windows mean a boundary inside the loop resets the count once at most. */
    const exhaust = async (ip: string) => {
      for (let i = 1; i <= 2 * loginAttemptsPerMinute + 1; i++) if ((await signIn(wrong, { ip })).status === 429) return i;
      return Infinity;
    };
    const attempts = await exhaust('127.0.3.2');
    expect(attempts).toBeGreaterThan(loginAttemptsPerMinute);
    expect(attempts).toBeLessThanOrEqual(2 * loginAttemptsPerMinute + 1);
    let limited = await signIn(store.keys.test.secretKey, { ip: '127.0.3.2' });
    // Only a new window can have opened in between; a second round then lands inside one window.
    if (limited.status !== 429) limited = (await exhaust('127.0.3.4'), await signIn(store.keys.test.secretKey, { ip: '127.0.3.4' }));
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.headers['set-cookie']).toBeUndefined();
    expect(limited.text).toContain('Too many requests');
    expect((await signIn(store.keys.test.secretKey, { ip: '127.0.3.3' })).status).toBe(303);
  });

  it('a live key opens the live environment', async () => {
    const token = await session(store.keys.live.secretKey);
    const res = await page(token);
    expect(res.text).toContain('Live mode');
    expect(res.text).not.toContain('Test mode');
  });
});

describe('dashboard sessions end', () => {
  it('sends a visitor without a session to sign-in, and a POST without one changes nothing', async () => {
    for (const url of ['/dashboard', '/dashboard/wallets', '/dashboard/mobile-money', '/dashboard/webhooks']) {
      const res = await stack.request({ method: 'GET', url });
      expect([url, res.status, res.headers.location]).toEqual([url, 303, '/dashboard/login']);
    }
    const res = await stack.request({ method: 'POST', url: '/dashboard/wallets/solana', payload: 'address=x', headers: formHeaders() });
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard/login']);
    expect((await stack.request({ method: 'GET', url: '/dashboard', headers: { cookie: 'malipo_dashboard=not-a-token' } })).status).toBe(303);
  });

  it('ends an expired session', async () => {
    const token = await session();
    expect((await page(token)).status).toBe(200);
    // As if it had been opened 13 hours ago: past its 12-hour life.
    await stack.pool.query(sql.unsafe`UPDATE dashboard_sessions SET created_at = now() - interval '13 hours', expires_at = now() - interval '1 hour'
      WHERE token_hash = ${sql.binary(sha256(token))}`);
    const res = await page(token);
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard/login']);
  });

  it('ends every session of a revoked API key', async () => {
    const s = await stack.createStore('Revoked');
    const [a, b] = [await session(s.keys.test.secretKey), await session(s.keys.test.secretKey)];
    const live = await session(s.keys.live.secretKey);
    await stack.pool.query(sql.unsafe`UPDATE api_keys SET revoked_at = now() WHERE store_id = ${s.clientId} AND environment = 'test' AND kind = 'secret'`);
    for (const token of [a, b]) expect((await page(token)).status).toBe(303);
    expect((await page(live)).status).toBe(200);
    const res = await signIn(s.keys.test.secretKey);
    expect([res.status, res.headers['set-cookie']]).toEqual([401, undefined]);
  });

  it('signs out: the session is revoked and its cookie cleared', async () => {
    const s = await stack.createStore('Sign-out');
    const token = await session(s.keys.test.secretKey);
    const csrf = csrfOf((await page(token)).text)!;
    const out = await stack.request({
      method: 'POST', url: '/dashboard/logout', payload: `csrf=${encodeURIComponent(csrf)}`,
      headers: { ...formHeaders(), cookie: `malipo_dashboard=${token}` },
    });
    expect([out.status, out.headers.location]).toEqual([303, '/dashboard/login?signedOut=1']);
    expect(sessionCookieOf(out).header).toMatch(/^malipo_dashboard=; Path=\/dashboard; Max-Age=0/);
    expect((await sessionRows(s.clientId)).map((r) => r.revoked)).toEqual([true]);
    expect((await page(token)).status).toBe(303);
  });

  it('marks the cookie Secure when the dashboard is served over https, and never logs the key or the token', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const config = { ...stack.config, publicBaseUrl: 'https://pay.example' };
    const rates = new RateService({ testKesPerUsdt: config.testKesPerUsdt, sources: [] });
    const app = await buildApp({ config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates, logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const res = await signIn(store.keys.test.secretKey, { base, origin: 'https://pay.example' });
      const { token, header } = sessionCookieOf(res);
      expect(header).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
      await httpCall(base, { method: 'GET', url: '/dashboard', headers: { cookie: `malipo_dashboard=${token}` } });
      const log = lines.join('');
      expect(log).toContain('dashboard sign-in');
      expect(log).not.toContain(store.keys.test.secretKey);
      expect(log).not.toContain(token);
    } finally {
      await app.close();
    }
  });
});
