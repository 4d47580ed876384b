import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import argon2 from 'argon2';
import { createHash } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { addToStore, dashboardUser, signInHttp, type DashboardUser } from '../helpers/dashboard-users.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Dashboard accounts over plain HTTP: sign-up, sign-in, password change, sign-out everywhere, the
 * store and environment switch, roles, and invitations. What a browser would add nothing to.
 */
let stack: Stack;
let store: CreatedStore;
let ip = 10;
/** Each sign-in from its own client address, so the per-IP sign-in limit never decides a case here. */
const nextIp = () => `127.0.0.${ip++}`;

beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Accounts Shop');
});
afterAll(async () => {
  await stack?.stop();
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const post = (url: string, fields: Record<string, string>, opts: { cookie?: string; ip?: string } = {}) =>
  httpCall(stack.baseUrl, {
    method: 'POST', url, payload: form(fields), localAddress: opts.ip ?? nextIp(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl, ...(opts.cookie ? { cookie: opts.cookie } : {}) },
  });
const get = (url: string, cookie?: string) => httpCall(stack.baseUrl, { method: 'GET', url, headers: cookie ? { cookie } : {} });
const cookieOf = (res: HttpResponse) =>
  ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('malipo_dashboard='))?.split(';')[0];
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const alertOf = (html: string) => /class="field-error"[^>]*>([^<]+)</.exec(html)?.[1] ?? /role="alert">([^<]+)</.exec(html)?.[1];
/** An action from a signed-in page: a fresh CSRF token of the session, then the form. */
async function act(session: { cookie: string }, url: string, fields: Record<string, string> = {}): Promise<HttpResponse> {
  const csrf = csrfOf((await get('/dashboard/account', session.cookie)).text);
  return post(url, { csrf, ...fields }, { cookie: session.cookie });
}
const signedIn = async (cookie: string) => (await get('/dashboard', cookie)).status === 200;
const count = (query: ReturnType<typeof sql.unsafe>) => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT (${query})::int AS n`);
const storesNamed = (name: string) => count(sql.unsafe`SELECT count(*) FROM stores WHERE name = ${name}`);
const hashOf = (email: string) => stack.pool.oneFirst(sql.type(z.object({ h: z.string() }))`SELECT password_hash AS h FROM dashboard_users WHERE email = ${email}`);

describe('sign-up', () => {
  it('creates a person and a store they own, stores an argon2id hash only, and opens a session; a taken email changes nothing', async () => {
    const email = 'Founder@Example.TEST ';
    const password = 'correct horse battery staple';
    const res = await post('/dashboard/signup', { storeName: 'Duka la Mama', email, password });
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard?welcome=1']);
    const cookie = cookieOf(res)!;
    const home = await get('/dashboard', cookie);
    expect(home.status).toBe(200);
    expect(home.text).toContain('Duka la Mama');
    expect(home.text).toContain('founder@example.test');
    expect(home.text).toContain('Owner');
    const hash = await hashOf('founder@example.test');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=65536,t=3,p=4\$/);
    expect(hash).not.toContain(password);
    expect(await argon2.verify(hash, password)).toBe(true);

    const again = await post('/dashboard/signup', { storeName: 'Duka la Mama', email: 'founder@example.test', password: 'another long password' });
    expect(again.status).toBe(400);
    expect(again.text).toContain('There is already an account with this email');
    expect(cookieOf(again)).toBeUndefined();
    expect(await storesNamed('Duka la Mama')).toBe(1);
  });

  it.each([
    [{ storeName: 'Short', email: 'short@example.test', password: 'too short' }, 'password', 'at least 12'],
    [{ storeName: 'Bad email', email: 'not-an-email', password: 'long enough password' }, 'email', 'not an email address'],
    [{ storeName: '   ', email: 'nostore@example.test', password: 'long enough password' }, 'storeName', 'Enter the store name'],
    [{ storeName: 'Same', email: 'same@example.test', password: 'same@example.test' }, 'password', 'email address as your password'],
  ])('refuses %j next to the field and creates nothing', async (fields, field, message) => {
    const users = await count(sql.unsafe`SELECT count(*) FROM dashboard_users`);
    const stores = await count(sql.unsafe`SELECT count(*) FROM stores`);
    const res = await post('/dashboard/signup', fields);
    expect(res.status).toBe(400);
    expect(res.text).toContain(`data-error-for="${field}"`);
    expect(alertOf(res.text)).toContain(message);
    expect(res.text).not.toContain(fields.password === 'too short' ? 'value="too short"' : 'value="long enough password"');
    expect(await count(sql.unsafe`SELECT count(*) FROM dashboard_users`)).toBe(users);
    expect(await count(sql.unsafe`SELECT count(*) FROM stores`)).toBe(stores);
  });

  it('takes the largest legal values and refuses one past each, creating nothing', async () => {
    const local = 'a'.repeat(64);
    const email254 = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(56)}.test`;
    expect(email254).toHaveLength(254);
    const longest = { storeName: 'N'.repeat(100), email: email254, password: 'p'.repeat(256) };
    const tooFar: [Record<string, string>, string][] = [
      [{ ...longest, password: 'p'.repeat(257) }, 'password'],
      [{ ...longest, email: `x${email254}` }, 'email'],
      [{ ...longest, storeName: 'N'.repeat(101) }, 'storeName'],
    ];
    for (const [fields, field] of tooFar) {
      const res = await post('/dashboard/signup', fields);
      expect([res.status, res.text.includes(`data-error-for="${field}"`)]).toEqual([400, true]);
    }
    expect(await count(sql.unsafe`SELECT count(*) FROM dashboard_users WHERE email = ${email254}`)).toBe(0);
    const res = await post('/dashboard/signup', longest);
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard?welcome=1']);
    expect((await post('/dashboard/login', { email: email254, password: 'p'.repeat(256) })).status).toBe(303);
  });
});

describe('sign-in', () => {
  it('answers a wrong password and an unknown email alike, and never echoes the password', async () => {
    const user = await dashboardUser(stack, store, 'viewer');
    const wrong = await post('/dashboard/login', { email: user.email, password: 'wrong password here' });
    const unknown = await post('/dashboard/login', { email: 'nobody@example.test', password: 'wrong password here' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(alertOf(wrong.text)).toBe('The email or password is wrong.');
    expect(alertOf(unknown.text)).toBe(alertOf(wrong.text));
    for (const res of [wrong, unknown]) {
      expect(res.text).not.toContain('wrong password here');
      expect(cookieOf(res)).toBeUndefined();
    }
    const ok = await post('/dashboard/login', { email: user.email.toUpperCase(), password: user.password });
    expect([ok.status, ok.headers.location]).toEqual([303, '/dashboard']);
  });

  it('replaces a hash made with weaker parameters at the next sign-in', async () => {
    const user = await dashboardUser(stack, store, 'viewer');
    const weak = await argon2.hash(user.password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
    await stack.pool.query(sql.unsafe`UPDATE dashboard_users SET password_hash = ${weak} WHERE id = ${user.userId}`);
    await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    const hash = await hashOf(user.email);
    expect(hash).not.toBe(weak);
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=65536,t=3,p=4\$/);
    expect(await argon2.verify(hash, user.password)).toBe(true);
  });

  it('refuses a person who belongs to no store any more', async () => {
    const user = await dashboardUser(stack, store, 'viewer');
    await stack.pool.query(sql.unsafe`DELETE FROM store_members WHERE user_id = ${user.userId}`);
    const res = await post('/dashboard/login', { email: user.email, password: user.password });
    expect(res.status).toBe(403);
    expect(res.text).toContain('belongs to no store');
    expect(cookieOf(res)).toBeUndefined();
  });
});

describe('sessions', () => {
  it('a password change needs the current password, then ends the other sessions and keeps this one', async () => {
    const user = await dashboardUser(stack, store, 'viewer');
    const a = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    const b = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    const refused = await act(a, '/dashboard/account/password', { currentPassword: 'not the password', newPassword: 'a brand new passphrase' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('data-error-for="currentPassword"');
    expect(await signedIn(b.cookie)).toBe(true);

    const changed = await act(a, '/dashboard/account/password', { currentPassword: user.password, newPassword: 'a brand new passphrase' });
    expect([changed.status, changed.headers.location]).toEqual([303, '/dashboard/account?passwordChanged=1']);
    expect(await signedIn(a.cookie)).toBe(true);
    expect(await signedIn(b.cookie)).toBe(false);
    expect((await post('/dashboard/login', { email: user.email, password: user.password })).status).toBe(401);
    expect((await post('/dashboard/login', { email: user.email, password: 'a brand new passphrase' })).status).toBe(303);
  });

  it('a password change whose session ending fails changes nothing: the old password still works, no session ended', async () => {
    const user = await dashboardUser(stack, store, 'viewer');
    const a = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    const b = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    // The database refuses to end this person's sessions: the second write of the change fails.
    await stack.pool.query(sql.unsafe`
      CREATE FUNCTION refuse_session_end() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$`);
    await stack.pool.query(sql.unsafe`
      CREATE TRIGGER refuse_session_end BEFORE UPDATE ON dashboard_sessions FOR EACH ROW
      WHEN (OLD.user_id = ${sql.literalValue(user.userId)}) EXECUTE FUNCTION refuse_session_end()`);
    try {
      const res = await act(a, '/dashboard/account/password', { currentPassword: user.password, newPassword: 'a password that never lands' });
      expect(res.status).toBe(500);
    } finally {
      await stack.pool.query(sql.unsafe`DROP TRIGGER refuse_session_end ON dashboard_sessions`);
      await stack.pool.query(sql.unsafe`DROP FUNCTION refuse_session_end()`);
    }
    expect(await signedIn(b.cookie)).toBe(true);
    expect((await post('/dashboard/login', { email: user.email, password: 'a password that never lands' })).status).toBe(401);
    expect((await post('/dashboard/login', { email: user.email, password: user.password })).status).toBe(303);
  });

  it('sign-out everywhere ends every session of the person, and no one else\'s', async () => {
    const user = await dashboardUser(stack, store, 'viewer');
    const other = await dashboardUser(stack, store, 'viewer');
    const a = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    const b = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    const c = await signInHttp(stack.baseUrl, other, { localAddress: nextIp() });
    const res = await act(a, '/dashboard/account/sign-out-everywhere');
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard/login?everywhere=1']);
    expect(await signedIn(a.cookie)).toBe(false);
    expect(await signedIn(b.cookie)).toBe(false);
    expect(await signedIn(c.cookie)).toBe(true);
  });

  it('removing a member ends their access to the store on the next request', async () => {
    const user = await dashboardUser(stack, store, 'developer');
    const s = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });
    expect(await signedIn(s.cookie)).toBe(true);
    await stack.pool.query(sql.unsafe`DELETE FROM store_members WHERE user_id = ${user.userId}`);
    const res = await get('/dashboard/keys', s.cookie);
    expect([res.status, res.headers.location]).toEqual([303, '/dashboard/login']);
  });
});

describe('the test/live switch and the store switch', () => {
  const last4 = (key: string) => key.slice(-4);

  it('scopes every page to the session\'s environment and store; a store the person is not in is refused', async () => {
    const second = await stack.createStore('Second Shop');
    const stranger = await stack.createStore('Stranger Shop');
    const user = await dashboardUser(stack, store, 'owner');
    await addToStore(stack, user, second, 'viewer');
    const s = await signInHttp(stack.baseUrl, user, { localAddress: nextIp() });

    let keys = await get('/dashboard/keys', s.cookie);
    expect(keys.text).toContain('Test mode');
    expect(keys.text).toContain(`sk_test_…${last4(store.keys.test.secretKey)}`);
    expect(keys.text).not.toContain(`sk_live_…${last4(store.keys.live.secretKey)}`);

    expect((await act(s, '/dashboard/switch', { environment: 'live', return: '/dashboard/keys' })).headers.location).toBe('/dashboard/keys');
    keys = await get('/dashboard/keys', s.cookie);
    expect(keys.text).toContain('Live mode');
    expect(keys.text).toContain(`sk_live_…${last4(store.keys.live.secretKey)}`);
    expect(keys.text).not.toContain(`sk_test_…${last4(store.keys.test.secretKey)}`);

    await act(s, '/dashboard/switch', { storeId: second.clientId, environment: 'test', return: 'https://evil.example/' });
    keys = await get('/dashboard/keys', s.cookie);
    expect(keys.text).toContain(`sk_test_…${last4(second.keys.test.secretKey)}`);
    expect(keys.text).toContain('your role: Viewer');
    // A viewer there: the page offers no key actions, and a forged one is refused and changes nothing.
    expect(keys.text).not.toContain('Create key');
    const before = await count(sql.unsafe`SELECT count(*) FROM api_keys WHERE store_id = ${second.clientId}`);
    const forged = await act(s, '/dashboard/keys', { kind: 'secret', name: 'sneaky' });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('Your role in this store is Viewer');
    expect(await count(sql.unsafe`SELECT count(*) FROM api_keys WHERE store_id = ${second.clientId}`)).toBe(before);

    const refused = await act(s, '/dashboard/switch', { storeId: stranger.clientId });
    expect(refused.status).toBe(404);
    keys = await get('/dashboard/keys', s.cookie);
    expect(keys.text).toContain(`sk_test_…${last4(second.keys.test.secretKey)}`);
    expect(keys.text).not.toContain(last4(stranger.keys.test.secretKey));
    expect((await act(s, '/dashboard/switch', { environment: 'staging' })).status).toBe(400);
  });
});

describe('roles', () => {
  it('a developer manages keys but not where money goes; an owner does both', async () => {
    const developer = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'developer'), { localAddress: nextIp() });
    const created = await act(developer, '/dashboard/keys', { kind: 'publishable', name: 'from a developer' });
    expect(created.status).toBe(201);
    const wallets = await count(sql.unsafe`SELECT count(*) FROM store_wallets WHERE store_id = ${store.clientId}`);
    const xpub = await act(developer, '/dashboard/wallets/evm', { xpub: 'xpub-not-even-checked' });
    expect(xpub.status).toBe(403);
    expect(xpub.text).toContain('This needs Owner');
    const mpesa = await act(developer, '/dashboard/mobile-money', { consumerKey: 'k', consumerSecret: 's', shortcode: '174379', passkey: 'p', environment: 'sandbox' });
    expect(mpesa.status).toBe(403);
    expect(await count(sql.unsafe`SELECT count(*) FROM store_wallets WHERE store_id = ${store.clientId}`)).toBe(wallets);
    expect((await get('/dashboard/wallets', developer.cookie)).text).toContain('Only an owner can register');
  });
});

describe('the team and invitations', () => {
  async function ownerSession(): Promise<{ user: DashboardUser; s: { cookie: string; csrf: string }; shop: CreatedStore }> {
    const shop = await stack.createStore(`Team Shop ${ip}`);
    const user = await dashboardUser(stack, shop, 'owner');
    return { user, shop, s: await signInHttp(stack.baseUrl, user, { localAddress: nextIp() }) };
  }
  const invitationLink = (html: string) => /data-testid="invitation-link">([^<]+)</.exec(html)?.[1];
  const pathOf = (url: string) => new URL(url).pathname;

  it('a new person joins by the link with the invited role, once; the token is kept only as a hash', async () => {
    const { s, shop } = await ownerSession();
    const res = await act(s, '/dashboard/team/invitations', { email: 'New.Hire@Example.test', role: 'viewer' });
    expect(res.status).toBe(201);
    const link = invitationLink(res.text)!;
    expect(link).toMatch(/\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/);
    const token = link.split('/').pop()!;
    const stored = await stack.pool.anyFirst(sql.type(z.object({ h: z.string() }))`
      SELECT encode(token_hash, 'hex') AS h FROM store_invitations WHERE store_id = ${shop.clientId}`);
    expect(stored).toEqual([createHash('sha256').update(token).digest('hex')]);
    // Listed without the link afterwards.
    const team = await get('/dashboard/team', s.cookie);
    expect(team.text).toContain('new.hire@example.test');
    expect(team.text).not.toContain(token);

    const page = await get(pathOf(link));
    expect(page.status).toBe(200);
    expect(page.text).toContain('Create account and join');
    const short = await post(pathOf(link), { password: 'short' });
    expect(short.status).toBe(400);
    expect(await count(sql.unsafe`SELECT count(*) FROM dashboard_users WHERE email = 'new.hire@example.test'`)).toBe(0);

    const joined = await post(pathOf(link), { password: 'a good long passphrase' });
    expect([joined.status, joined.headers.location]).toEqual([303, '/dashboard?joined=1']);
    const home = await get('/dashboard', cookieOf(joined)!);
    expect(home.text).toContain(shop.name);
    expect(home.text).toContain('your role: Viewer');

    const again = await post(pathOf(link), { password: 'a good long passphrase' });
    expect(again.status).toBe(404);
    expect(again.text).toContain('not valid any more');
    expect(await count(sql.unsafe`SELECT count(*) FROM store_members WHERE store_id = ${shop.clientId}`)).toBe(2);
  });

  it('an existing person joins with their own password; a wrong one joins nothing; an expired link is refused', async () => {
    const { s, shop } = await ownerSession();
    const elsewhere = await dashboardUser(stack, store, 'viewer');
    const link = invitationLink((await act(s, '/dashboard/team/invitations', { email: elsewhere.email, role: 'developer' })).text)!;
    expect((await get(pathOf(link))).text).toContain('Sign in and join');
    const wrong = await post(pathOf(link), { password: 'not their password' });
    expect(wrong.status).toBe(401);
    expect(await count(sql.unsafe`SELECT count(*) FROM store_members WHERE store_id = ${shop.clientId} AND user_id = ${elsewhere.userId}`)).toBe(0);
    const joined = await post(pathOf(link), { password: elsewhere.password });
    expect(joined.status).toBe(303);
    expect((await get('/dashboard', cookieOf(joined)!)).text).toContain('your role: Developer');

    const later = await dashboardUser(stack, store, 'viewer');
    const expired = invitationLink((await act(s, '/dashboard/team/invitations', { email: later.email, role: 'viewer' })).text)!;
    await stack.pool.query(sql.unsafe`UPDATE store_invitations SET created_at = now() - interval '8 days', expires_at = now() - interval '1 day' WHERE email = ${later.email}`);
    expect((await get(pathOf(expired))).status).toBe(404);
    // A token of another shape, or one character short, is no invitation.
    for (const bad of ['x', expired.split('/').pop()!.slice(1), `${'A'.repeat(43)}`]) expect((await get(`/dashboard/invitations/${bad}`)).status).toBe(404);
    expect((await post(pathOf(expired), { password: later.password })).status).toBe(404);
  });

  it('only owners invite or change roles, and a store never loses its last owner', async () => {
    const { s, user, shop } = await ownerSession();
    const dev = await dashboardUser(stack, shop, 'developer');
    const devSession = await signInHttp(stack.baseUrl, dev, { localAddress: nextIp() });
    expect((await act(devSession, '/dashboard/team/invitations', { email: 'x@example.test', role: 'owner' })).status).toBe(403);
    expect((await act(devSession, `/dashboard/team/${dev.userId}/role`, { role: 'owner' })).status).toBe(403);
    expect(await count(sql.unsafe`SELECT count(*) FROM store_invitations WHERE store_id = ${shop.clientId}`)).toBe(0);

    const demote = await act(s, `/dashboard/team/${user.userId}/role`, { role: 'viewer' });
    expect(demote.status).toBe(409);
    expect(demote.text).toContain('at least one owner');
    expect((await act(s, `/dashboard/team/${user.userId}/remove`)).status).toBe(409);
    expect((await get('/dashboard/team', s.cookie)).text).toContain('your role: Owner');

    expect((await act(s, `/dashboard/team/${dev.userId}/role`, { role: 'owner' })).status).toBe(303);
    expect((await act(s, `/dashboard/team/${user.userId}/role`, { role: 'viewer' })).status).toBe(303);
    expect((await get('/dashboard/team', s.cookie)).text).toContain('your role: Viewer');
    // Another store's member id is no member here.
    expect((await act(devSession, `/dashboard/team/${store.clientId}/remove`)).status).toBe(404);
    // A member id that is no id (a NUL in it: found by the fuzz suite) is no member, never a 500.
    for (const bad of ['usr_%00', 'a%00b', 'x'.repeat(300)]) {
      expect((await act(devSession, `/dashboard/team/${bad}/remove`)).status).toBe(404);
      expect((await act(devSession, `/dashboard/team/${bad}/role`, { role: 'viewer' })).status).toBe(404);
    }
  });
});
