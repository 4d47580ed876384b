import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { RateService } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { generateKey, keyringOf } from '../../domain/crypto/credentials.js';
import { dashboardCookieKeys } from '../../services/dashboard/cookie-keys.js';
import { changeMemberRole, removeMember } from '../../services/dashboard/team.js';
import { keyringFor } from '../../services/keyring.js';
import { loginAttemptsPerEmailPerMinute, loginAttemptsPerMinute } from '../../web/dashboard/login.js';
import { addToStore, dashboardUser, type DashboardUser } from '../helpers/dashboard-users.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Dashboard sessions over plain HTTP: what a browser would add nothing to. */
let stack: Stack;
let store: CreatedStore;
/** An owner of `store`: the person most tests sign in as. */
let owner: DashboardUser;
beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Session Shop');
  owner = await dashboardUser(stack, store);
});
afterAll(async () => {
  await stack?.stop();
});

const formHeaders = (origin = stack.baseUrl) => ({ 'content-type': 'application/x-www-form-urlencoded', origin });

type Credentials = Pick<DashboardUser, 'email' | 'password'>;

function signIn(who: Credentials, opts: { ip?: string; origin?: string; base?: string } = {}): Promise<HttpResponse> {
  return postLogin(new URLSearchParams({ email: who.email, password: who.password }).toString(), opts);
}

/** The sign-in form posted as is: any fields. */
function postLogin(form: string, opts: { ip?: string; origin?: string; base?: string } = {}): Promise<HttpResponse> {
  return httpCall(opts.base ?? stack.baseUrl, {
    method: 'POST', url: '/dashboard/login', payload: form,
    headers: formHeaders(opts.origin ?? opts.base ?? stack.baseUrl), localAddress: opts.ip,
  });
}

/**
 * The session cookie from Set-Cookie: its value as the browser sends it back (signed:
 * `<token>.<signature>`, URI-encoded), the token inside, and the whole header for its attributes.
 */
function sessionCookieOf(res: HttpResponse): { cookie: string; token: string; header: string } {
  const header = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('malipo_dashboard='));
  if (!header) throw new Error(`no session cookie (status ${res.status})`);
  const cookie = header.slice('malipo_dashboard='.length).split(';')[0]!;
  return { cookie, token: tokenOf(cookie), header };
}

/** The token a signed cookie value carries (everything before the last dot). */
function tokenOf(cookie: string): string {
  const value = decodeURIComponent(cookie);
  return value.slice(0, value.lastIndexOf('.'));
}

/** A cookie value signed the way @fastify/cookie signs: HMAC-SHA256 in base64 without padding. */
const signedWith = (secret: Buffer, token: string) =>
  encodeURIComponent(`${token}.${createHmac('sha256', secret).update(token).digest('base64').replace(/=+$/, '')}`);

/** The attributes of a Set-Cookie header, in any order. */
const attributesOf = (header: string) => header.split('; ').slice(1).sort();

/** Signs in and returns the session cookie's value, as a browser would send it back. */
async function session(who: Credentials = owner, opts: { ip?: string } = {}): Promise<string> {
  const res = await signIn(who, opts);
  expect([res.status, res.headers.location]).toEqual([303, '/dashboard']);
  return sessionCookieOf(res).cookie;
}

const page = (cookie: string, url = '/dashboard') => stack.request({ method: 'GET', url, headers: { cookie: `malipo_dashboard=${cookie}` } });
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1];
const sha256 = (s: string) => createHash('sha256').update(s).digest();
const keyCount = (storeId: string) => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM api_keys WHERE store_id = ${storeId}`);

/** Creates a key from the dashboard's form: a state-changing POST whose effect is easy to count. */
const createKey = (cookie: string, form: string, headers: Record<string, string> = formHeaders()) =>
  stack.request({ method: 'POST', url: '/dashboard/keys', payload: form, headers: { ...headers, cookie: `malipo_dashboard=${cookie}` } });

/** Another API process on the shared database, with its own config; closed by the caller. */
async function otherProcess(config: typeof stack.config, logger?: pino.Logger): Promise<{ base: string; close: () => Promise<void> }> {
  const rates = new RateService({ testKesPerUsdt: config.testKesPerUsdt, sources: [] });
  const app = await buildApp({ config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

const sessionCount = (userId: string) =>
  stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM dashboard_sessions WHERE user_id = ${userId}`);

/** Time for whatever a request might still do after its answer (a password check takes a few hundred ms). */
const afterAnswer = () => new Promise((resolve) => setTimeout(resolve, 2_000));

const sessionRows = (storeId: string) =>
  stack.pool.any(sql.type(z.object({ token_hash: z.instanceof(Buffer), environment: z.string(), user_id: z.string(), lifetime_s: z.number(), revoked: z.boolean(), row: z.string() }))`
    SELECT token_hash, environment, user_id, extract(epoch FROM expires_at - created_at)::int AS lifetime_s,
           revoked_at IS NOT NULL AS revoked, row_to_json(s)::text AS row
    FROM dashboard_sessions s WHERE store_id = ${storeId} ORDER BY created_at`);

describe('dashboard sign-in', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and stores only its SHA-256, never the password', async () => {
    const s = await stack.createStore('Cookie Shop');
    const person = await dashboardUser(stack, s);
    const res = await signIn(person);
    expect(res.status).toBe(303);
    const { cookie, token, header } = sessionCookieOf(res);
    expect(attributesOf(header)).toEqual(['HttpOnly', 'Max-Age=43200', 'Path=/dashboard', 'SameSite=Strict']);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await sessionRows(s.clientId);
    expect(row!.token_hash.equals(sha256(token))).toBe(true);
    expect(row).toMatchObject({ environment: 'test', user_id: person.userId, lifetime_s: 12 * 3600, revoked: false });
    for (const secret of [person.password, token, cookie]) expect(row!.row).not.toContain(secret);
    // The person's row keeps an argon2id hash of the password, never the password.
    const user = await stack.pool.oneFirst(sql.type(z.object({ row: z.string() }))`SELECT row_to_json(u)::text AS row FROM dashboard_users u WHERE id = ${person.userId}`);
    expect(user).toContain('$argon2id$');
    expect(user).not.toContain(person.password);
    const overview = await page(cookie);
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Cookie Shop');
    expect(overview.text).toContain(person.email);
    expect(overview.text).not.toContain(person.password);
    expect(res.text).not.toContain(person.password);
  });

  it('answers a wrong password and an unknown email alike, and opens no session', async () => {
    const s = await stack.createStore('Same Answer');
    const person = await dashboardUser(stack, s);
    const unknown = { email: `nobody-${randomBytes(4).toString('hex')}@example.test`, password: person.password };
    const wrong = await signIn({ email: person.email, password: `${person.password}x` }, { ip: '127.0.3.1' });
    const nobody = await signIn(unknown, { ip: '127.0.3.1' });
    expect(wrong.status).toBe(401);
    expect(nobody.status).toBe(wrong.status);
    // The same page but for the email typed in, which the form keeps.
    const anonymous = (res: HttpResponse, email: string) => res.text.replaceAll(email, 'EMAIL');
    expect(anonymous(nobody, unknown.email)).toBe(anonymous(wrong, person.email));
    expect(wrong.text).toContain('The email or password is wrong.');
    const headersOf = (res: HttpResponse) => Object.keys(res.headers).filter((h) => !['date', 'x-request-id', 'content-length'].includes(h)).sort();
    expect(headersOf(nobody)).toEqual(headersOf(wrong));
    for (const res of [wrong, nobody]) {
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.text).not.toContain(person.password);
    }
    expect(await sessionRows(s.clientId)).toEqual([]);
  });

  it('refuses a malformed form with its message, and a secret API key opens nothing', async () => {
    const s = await stack.createStore('Refusals');
    const person = await dashboardUser(stack, s);
    const cases: [string, string, number, string][] = [
      ['no email', new URLSearchParams({ email: '', password: person.password }).toString(), 400, 'Enter your email address.'],
      ['not an email', new URLSearchParams({ email: 'hello', password: person.password }).toString(), 400, 'The email address is not an email address.'],
      ['no password', new URLSearchParams({ email: person.email, password: '' }).toString(), 400, 'Enter your password.'],
      // The old sign-in form: a secret key alone is no email.
      ['the old secret key form', new URLSearchParams({ secretKey: s.keys.test.secretKey }).toString(), 400, 'Enter your email address.'],
      // A secret key is not the password of the store's owner either.
      ['a secret key as the password', new URLSearchParams({ email: person.email, password: s.keys.test.secretKey }).toString(), 401, 'The email or password is wrong.'],
    ];
    for (const [what, form, status, message] of cases) {
      const res = await postLogin(form, { ip: '127.0.3.5' });
      expect({ what, status: res.status }).toEqual({ what, status });
      expect(res.text).toContain(message.replace(/'/g, '&#39;'));
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.text).not.toContain(person.password);
      expect(res.text).not.toContain(s.keys.test.secretKey);
    }
    // Nor does a key open the dashboard sent the API's way.
    const withKey = await stack.request({ method: 'GET', url: '/dashboard', key: s.keys.test.secretKey });
    expect([withKey.status, withKey.headers.location]).toEqual([303, '/dashboard/login']);
    expect(await sessionRows(s.clientId)).toEqual([]);
  });

  it('refuses a sign-in posted from another site', async () => {
    const res = await signIn(owner, { origin: 'https://evil.example' });
    expect(res.status).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('limits sign-in attempts per IP; a right password is refused too while limited, other IPs are not', async () => {
    // A guesser trying one password on many emails: no email sees more than one attempt.
    let n = 0;
    const guess = () => ({ email: `guess-${n++}-${randomBytes(3).toString('hex')}@example.test`, password: 'correct horse battery' });
    /** Attempts until the first 429; fixed windows mean a boundary inside the loop resets the count once at most. */
    const exhaust = async (ip: string) => {
      for (let i = 1; i <= 2 * loginAttemptsPerMinute + 1; i++) if ((await signIn(guess(), { ip })).status === 429) return i;
      return Infinity;
    };
    const attempts = await exhaust('127.0.3.2');
    expect(attempts).toBeGreaterThan(loginAttemptsPerMinute);
    expect(attempts).toBeLessThanOrEqual(2 * loginAttemptsPerMinute + 1);
    let opened = await sessionCount(owner.userId);
    let limited = await signIn(owner, { ip: '127.0.3.2' });
    // Only a new window can have opened in between; a second round then lands inside one window.
    if (limited.status !== 429) limited = (opened++, await exhaust('127.0.3.4'), await signIn(owner, { ip: '127.0.3.4' }));
    expect(limited.status).toBe(429);
    // Refused means refused: no password check behind the answer, no session opened after it.
    await afterAnswer();
    expect(await sessionCount(owner.userId)).toBe(opened);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.headers['set-cookie']).toBeUndefined();
    expect(limited.text).toContain('Too many requests');
    expect((await signIn(owner, { ip: '127.0.3.3' })).status).toBe(303);
  }, 120_000);

  it('limits sign-in attempts per email from any IP; the right password is refused too, other emails are not', async () => {
    const s = await stack.createStore('Guessed');
    const target = await dashboardUser(stack, s);
    const bystander = await dashboardUser(stack, s, 'viewer');
    let ip = 10;
    // Every guess from another address, the email in either case: one email, one budget.
    const guess = () => signIn({ email: ip % 2 ? target.email.toUpperCase() : target.email, password: `guess ${ip}` }, { ip: `127.0.4.${ip++}` });
    const exhaust = async () => {
      for (let i = 1; i <= 2 * loginAttemptsPerEmailPerMinute + 1; i++) if ((await guess()).status === 429) return i;
      return Infinity;
    };
    const attempts = await exhaust();
    expect(attempts).toBeGreaterThan(loginAttemptsPerEmailPerMinute);
    expect(attempts).toBeLessThanOrEqual(2 * loginAttemptsPerEmailPerMinute + 1);
    let opened = 0;
    let limited = await signIn(target, { ip: `127.0.4.${ip++}` });
    if (limited.status !== 429) limited = (opened++, await exhaust(), await signIn(target, { ip: `127.0.4.${ip++}` }));
    expect(limited.status).toBe(429);
    await afterAnswer();
    expect(await sessionCount(target.userId)).toBe(opened);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(limited.headers['set-cookie']).toBeUndefined();
    expect(limited.text).toContain('Too many requests');
    expect(limited.text).not.toContain(target.password);
    // Another person signs in from the very address of the last guess.
    expect((await signIn(bystander, { ip: `127.0.4.${ip - 1}` })).status).toBe(303);
    expect(await sessionCount(bystander.userId)).toBe(1);
  }, 120_000);

  it('switches a session to live mode, that session only; a store the person is not in is refused', async () => {
    // Any role may look at live mode.
    const me = await dashboardUser(stack, store, 'viewer');
    const cookie = await session(me);
    const other = await session(me);
    const csrf = csrfOf((await page(cookie)).text)!;
    const switchTo = (form: Record<string, string>) => stack.request({
      method: 'POST', url: '/dashboard/switch', payload: new URLSearchParams({ ...form, csrf }).toString(),
      headers: { ...formHeaders(), cookie: `malipo_dashboard=${cookie}` },
    });
    const foreign = await stack.createStore('Not Mine');
    const refused = await switchTo({ storeId: foreign.clientId, environment: 'live' });
    expect(refused.status).toBe(404);
    expect((await page(cookie)).text).toContain('Test mode');
    const res = await switchTo({ environment: 'live' });
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard']);
    const live = await page(cookie);
    expect(live.text).toContain('Live mode');
    expect(live.text).not.toContain('Test mode');
    expect(live.text).not.toContain('Not Mine');
    expect((await page(other)).text).toContain('Test mode');
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
    const cookie = await session();
    expect((await page(cookie)).status).toBe(200);
    // As if it had been opened 13 hours ago: past its 12-hour life.
    await stack.pool.query(sql.unsafe`UPDATE dashboard_sessions SET created_at = now() - interval '13 hours', expires_at = now() - interval '1 hour'
      WHERE token_hash = ${sql.binary(sha256(tokenOf(cookie)))}`);
    const res = await page(cookie);
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard/login']);
  });

  it('ends access to a store on the next request once the person is removed from it, and reads the role on every request', async () => {
    const s = await stack.createStore('Removed');
    const elsewhere = await stack.createStore('Elsewhere');
    const boss = await dashboardUser(stack, s);
    const dev = await dashboardUser(stack, s, 'developer');
    // A second person also in another store: removed from this one, they still reach that one.
    const both = await dashboardUser(stack, s, 'developer');
    await addToStore(stack, both, elsewhere, 'viewer');
    const [a, b] = [await session(dev), await session(dev)];
    const bothCookie = await session(both);
    const bossCookie = await session(boss);
    const csrf = csrfOf((await page(a)).text)!;
    const keysBefore = await keyCount(s.clientId);
    expect((await createKey(a, `kind=publishable&csrf=${encodeURIComponent(csrf)}`)).status).toBe(201);

    // A role changed by an owner holds from the next request: a viewer changes nothing.
    await changeMemberRole(stack, s.clientId, dev.userId, 'viewer');
    const asViewer = await createKey(a, `kind=publishable&csrf=${encodeURIComponent(csrf)}`);
    expect(asViewer.status).toBe(403);
    expect(asViewer.text).toContain('Not allowed');
    expect((await page(a)).status).toBe(200);

    await removeMember(stack, s.clientId, dev.userId);
    // Straight in the database too, as an operator would.
    await stack.pool.query(sql.unsafe`DELETE FROM store_members WHERE store_id = ${s.clientId} AND user_id = ${both.userId}`);
    for (const cookie of [a, b, bothCookie]) {
      for (const url of ['/dashboard', '/dashboard/keys', '/dashboard/account']) {
        const res = await page(cookie, url);
        expect([url, res.status, res.headers.location]).toEqual([url, 303, '/dashboard/login']);
      }
    }
    const post = await createKey(a, `kind=publishable&csrf=${encodeURIComponent(csrf)}`);
    expect([post.status, post.headers.location]).toEqual([303, '/dashboard/login']);
    expect(await keyCount(s.clientId)).toBe(keysBefore + 1);
    expect((await page(bossCookie)).status).toBe(200);
    // In no store now: the right password opens nothing.
    const again = await signIn(dev);
    expect([again.status, again.headers['set-cookie']]).toEqual([403, undefined]);
    expect(again.text).toContain('belongs to no store');
    // Still in another store: signing in lands there, not in the store they left.
    const moved = await session(both);
    const there = await page(moved);
    expect(there.text).toContain('Elsewhere');
    expect(there.text).not.toContain('Removed');
  });

  it('signs out: the session is revoked and its cookie cleared', async () => {
    const s = await stack.createStore('Sign-out');
    const cookie = await session(await dashboardUser(stack, s));
    const csrf = csrfOf((await page(cookie)).text)!;
    const out = await stack.request({
      method: 'POST', url: '/dashboard/logout', payload: `csrf=${encodeURIComponent(csrf)}`,
      headers: { ...formHeaders(), cookie: `malipo_dashboard=${cookie}` },
    });
    expect([out.status, out.headers.location]).toEqual([303, '/dashboard/login?signedOut=1']);
    const cleared = sessionCookieOf(out).header;
    expect(cleared).toMatch(/^malipo_dashboard=;/);
    expect(attributesOf(cleared)).toEqual(expect.arrayContaining(['Max-Age=0', 'Path=/dashboard', 'HttpOnly', 'SameSite=Strict']));
    expect((await sessionRows(s.clientId)).map((r) => r.revoked)).toEqual([true]);
    expect((await page(cookie)).status).toBe(303);
  });

  it('marks the cookie Secure when the dashboard is served over https, and never logs the password or the token', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    const config = { ...stack.config, publicBaseUrl: 'https://pay.example' };
    const other = await otherProcess(config, logger);
    try {
      const res = await signIn(owner, { base: other.base, origin: 'https://pay.example' });
      const { cookie, token, header } = sessionCookieOf(res);
      expect(attributesOf(header)).toEqual(['HttpOnly', 'Max-Age=43200', 'Path=/dashboard', 'SameSite=Strict', 'Secure']);
      const home = { cookie: `malipo_dashboard=${cookie}` };
      const overview = await httpCall(other.base, { method: 'GET', url: '/dashboard', headers: home });
      expect(overview.status).toBe(200);
      // A forged form: the plugin's refusal is logged, with nothing secret in it.
      const forged = await httpCall(other.base, { method: 'POST', url: '/dashboard/keys', payload: 'kind=secret&csrf=forged', headers: { ...home, ...formHeaders('https://pay.example') } });
      expect(forged.status).toBe(403);
      const out = await httpCall(other.base, {
        method: 'POST', url: '/dashboard/logout', payload: `csrf=${encodeURIComponent(csrfOf(overview.text)!)}`, headers: { ...home, ...formHeaders('https://pay.example') },
      });
      expect(attributesOf(sessionCookieOf(out).header)).toEqual(expect.arrayContaining(['Max-Age=0', 'Secure']));
      const log = lines.join('');
      expect(log).toContain('dashboard sign-in');
      expect(log).toContain('Invalid csrf token');
      const { cookieSecrets, csrfHmacKey } = await dashboardCookieKeys(config);
      const secrets = [owner.password, encodeURIComponent(owner.password), new URLSearchParams({ p: owner.password }).toString().slice(2), token, cookie, decodeURIComponent(cookie), ...[...cookieSecrets, csrfHmacKey].flatMap((k) => [k.toString('base64'), k.toString('hex'), k.toString('base64url')])];
      for (const secret of secrets) expect(log).not.toContain(secret);
      for (const secret of secrets) expect(overview.text + forged.text + out.text).not.toContain(secret);
    } finally {
      await other.close();
    }
  });
});

describe('dashboard cookie signing', () => {
  it('refuses a cookie re-signed with another secret, edited, or unsigned, as if there were no session', async () => {
    const s = await stack.createStore('Tamper Shop');
    const cookie = await session(await dashboardUser(stack, s));
    const token = tokenOf(cookie);
    const good = await page(cookie);
    expect(good.status).toBe(200);
    const csrf = csrfOf(good.text)!;
    const flip = (c: string) => (c === 'A' ? 'B' : 'A');
    const signature = decodeURIComponent(cookie).slice(token.length + 1);
    const forged = {
      'signed with another secret': signedWith(randomBytes(32), token),
      'token edited, signature kept': encodeURIComponent(`${flip(token[0]!)}${token.slice(1)}.${signature}`),
      'signature edited': encodeURIComponent(`${token}.${flip(signature[0]!)}${signature.slice(1)}`),
      'bare token, unsigned': token,
      'signature only': encodeURIComponent(`.${signature}`),
    };
    const nobody = await stack.request({ method: 'GET', url: '/dashboard' });
    const keysBefore = await keyCount(s.clientId);
    for (const [what, value] of Object.entries(forged)) {
      const res = await page(value);
      expect([what, res.status, res.headers.location]).toEqual([what, nobody.status, nobody.headers.location]);
      // A POST with the forged cookie and the session's own CSRF token changes nothing either.
      const post = await createKey(value, `kind=secret&csrf=${encodeURIComponent(csrf)}`);
      expect([what, post.status, post.headers.location]).toEqual([what, 303, '/dashboard/login']);
    }
    expect(await keyCount(s.clientId)).toBe(keysBefore);
    expect((await page(cookie)).status).toBe(200);
  });

  it('signs with a key derived from the keyring: another process with the same keys accepts the cookie, one with other keys does not', async () => {
    const cookie = await session();
    const dataDir = await mkdtemp(join(tmpdir(), 'malipo-cookie-keys-'));
    const same = await otherProcess(stack.config);
    // ENCRYPTION_KEY rotated: a new key first, the old one kept after it, so cookies signed before still verify.
    const { current } = await keyringFor(stack.config, 'test');
    const rotated = await otherProcess({ ...stack.config, encryptionKeys: keyringOf([generateKey('rotated'), current]) });
    const stranger = await otherProcess({ ...stack.config, dataDir, encryptionKeys: undefined });
    try {
      const get = (base: string) => httpCall(base, { method: 'GET', url: '/dashboard', headers: { cookie: `malipo_dashboard=${cookie}` } });
      expect((await get(same.base)).status).toBe(200);
      expect((await get(rotated.base)).status).toBe(200);
      const refused = await get(stranger.base);
      expect([refused.status, refused.headers.location]).toEqual([303, '/dashboard/login']);
    } finally {
      await Promise.all([same.close(), rotated.close(), stranger.close()]);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('dashboard forms and CSRF', () => {
  it('refuses a form without the CSRF token, or with a wrong one, with a 403 that changes nothing', async () => {
    const s = await stack.createStore('Csrf Shop');
    const person = await dashboardUser(stack, s, 'developer');
    const cookie = await session(person);
    const overview = await page(cookie);
    // The token's secret is the session cookie itself: showing a page sets no second cookie.
    expect(overview.headers['set-cookie']).toBeUndefined();
    const csrf = csrfOf(overview.text)!;
    // Another session of the same person, and another person's session in the same store.
    const fromAnotherSession = csrfOf((await page(await session(person))).text)!;
    const fromAnotherPerson = csrfOf((await page(await session(await dashboardUser(stack, s)))).text)!;
    const flipped = `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}`;
    const before = await keyCount(s.clientId);
    const refusals: [string, string, Record<string, string>?][] = [
      ['no token', 'kind=secret'],
      ['empty token', 'kind=secret&csrf='],
      ['made-up token', `kind=secret&csrf=${'x'.repeat(csrf.length)}`],
      ['one character changed', `kind=secret&csrf=${encodeURIComponent(flipped)}`],
      ["another session's token", `kind=secret&csrf=${encodeURIComponent(fromAnotherSession)}`],
      ["another person's token", `kind=secret&csrf=${encodeURIComponent(fromAnotherPerson)}`],
      ['token in a header, not the form', 'kind=secret', { ...formHeaders(), 'x-csrf-token': csrf }],
      ['token in a JSON body', JSON.stringify({ kind: 'secret', csrf }), { 'content-type': 'application/json', origin: stack.baseUrl }],
    ];
    for (const [what, form, headers] of refusals) {
      const res = await createKey(cookie, form, headers);
      expect([what, res.status]).toEqual([what, 403]);
      expect(res.text).toContain('Nothing was changed.');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    expect(await keyCount(s.clientId)).toBe(before);
    // The page's own token goes through, and a token stays good for the session's other pages.
    expect((await createKey(cookie, `kind=publishable&csrf=${encodeURIComponent(csrf)}`)).status).toBe(201);
    expect((await createKey(cookie, `kind=publishable&csrf=${encodeURIComponent(csrf)}`)).status).toBe(201);
    expect(await keyCount(s.clientId)).toBe(before + 2);
  });

  it('refuses a form from another origin even with the right token', async () => {
    const s = await stack.createStore('Origin Shop');
    const cookie = await session(await dashboardUser(stack, s));
    const form = `kind=secret&csrf=${encodeURIComponent(csrfOf((await page(cookie)).text)!)}`;
    const type = { 'content-type': 'application/x-www-form-urlencoded' };
    const before = await keyCount(s.clientId);
    const refusals: [string, Record<string, string>][] = [
      ['another origin', { ...type, origin: 'https://evil.example' }],
      ['Origin: null', { ...type, origin: 'null' }],
      ['no Origin, a Referer from another site', { ...type, referer: 'https://evil.example/page' }],
      ['neither Origin nor Referer', type],
    ];
    for (const [what, headers] of refusals) {
      const res = await createKey(cookie, form, headers);
      expect([what, res.status]).toEqual([what, 403]);
    }
    expect(await keyCount(s.clientId)).toBe(before);
    expect((await createKey(cookie, form, { ...type, referer: `${stack.baseUrl}/dashboard/keys` })).status).toBe(201);
    expect(await keyCount(s.clientId)).toBe(before + 1);
  });
});
