import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RouteDef } from '../../api/route.js';
import { allRoutes } from '../../api/routes/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { newId } from '../../domain/ids.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { hashInvitationToken, inviteMember, removeMember } from '../../services/dashboard/team.js';
import { sandboxPaybill } from '../helpers/daraja.js';
import { dashboardUser, signInHttp, type DashboardUser } from '../helpers/dashboard-users.js';
import { randomAccountXpubs, solanaWallet } from '../helpers/fixtures.js';
import {
  apiCaller, appRoutes, connectEveryRail, countTemporalWrites, errorBodyProblem, fillPath, nextClientIp, pathParams, routeName, send, settle, startHostileStack,
  TableFingerprint, type AppRoute, type HostileStack, type RawResponse,
} from './hostile/common.js';
import { validBody } from './hostile/seeds.js';
import { registerSecrets, writeReport } from './harness/report.js';

/**
 * Every route the app serves (read from the app) against every wrong credential: none, a
 * malformed key, an unknown key, a revoked key, a publishable key where a secret one is needed,
 * the other environment's key, and another store's key with this store's object ids (BOLA). Each
 * gets its exact status and error code; another store's (or environment's) view of an object is
 * exactly the answer for an id that does not exist; and nothing changes, in any table or in Temporal.
 * The dashboard's routes alike with sessions: none, forged, ended (signed out, or its person
 * removed from the store), another store's, and a role below the action's.
 */
const scenario = 'auth-matrix';
const merchant = sandboxPaybill('auth-matrix');

let h: HostileStack;
let daraja: DarajaEmulator;
let owner: CreatedStore;
let other: CreatedStore;
let fp: TableFingerprint;
let temporalWrites: { readonly count: number };
const ids: Record<string, string> = {};
const revoked: { secret: string; publishable: string } = { secret: '', publishable: '' };
const secrets: Array<{ kind: string; value: string }> = [];
const counts = { fuzzedInputs: 0, http5xx: 0, partialWrites: 0, cases: 0 };
const problems: string[] = [];

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, h.stack.baseUrl) });
  const encryptionKey = formatKeyEntry(generateKey());
  h = await startHostileStack(scenario, { MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: encryptionKey });
  const { stack } = h;
  owner = await stack.createStore('Owner');
  other = await stack.createStore('Other');
  const key = owner.keys.test.secretKey;
  const api = apiCaller(stack, key);
  const xpubs = await connectEveryRail(api, owner.clientId, merchant);
  // The other store is set up alike in both environments, so nothing but ownership can refuse it.
  const otherXpubs = randomAccountXpubs();
  for (const env of ['test', 'live'] as const) {
    const k = other.keys[env].secretKey;
    await api('PUT', `/v1/merchant/clients/${other.clientId}/wallets/${env === 'test' ? 'evm' : 'tron'}`, { xpub: env === 'test' ? otherXpubs.evm : otherXpubs.tron }, k);
  }
  const link = await api('POST', '/v1/payment-links', { usdtAmount: '4', enabledRails: ['USDT_BSC', 'MOBILE_MONEY'] });
  const invoice = await api('POST', '/v1/invoices', { amount: '2', network: 'BSC' });
  const endpoint = await api('POST', '/v1/webhook-endpoints', { url: 'https://shop.example/hooks' });
  const spare = await api('POST', '/v1/keys', { kind: 'secret', name: 'spare' });
  const toRevoke = await api('POST', '/v1/keys', { kind: 'secret', name: 'revoked' });
  const pkToRevoke = await api('POST', '/v1/keys', { kind: 'publishable', name: 'revoked pk' });
  await api('POST', `/v1/keys/${toRevoke.id}/revoke`, {});
  await api('POST', `/v1/keys/${pkToRevoke.id}/revoke`, {});
  revoked.secret = toRevoke.key;
  revoked.publishable = pkToRevoke.key;
  Object.assign(ids, { linkId: link.id, invoiceId: invoice.id, endpointId: endpoint.id, keyId: spare.id, evmXpub: xpubs.evm, tronXpub: xpubs.tron });
  secrets.push(
    { kind: 'ENCRYPTION_KEY', value: encryptionKey },
    ...[owner, other].flatMap((s) => [{ kind: 'secret API key', value: s.keys.test.secretKey }, { kind: 'secret API key', value: s.keys.live.secretKey }]),
    { kind: 'secret API key', value: spare.key }, { kind: 'secret API key', value: toRevoke.key }, { kind: 'webhook secret', value: endpoint.secret },
    { kind: 'M-Pesa consumer key', value: merchant.consumerKey }, { kind: 'M-Pesa consumer secret', value: merchant.consumerSecret },
  );
  // Dashboard people: the owner's, another store's owner, and sessions that ended.
  const ownerUser = await dashboardUser(stack, owner);
  const otherUser = await dashboardUser(stack, other);
  const removed = await dashboardUser(stack, owner, 'developer');
  const viewerUser = await dashboardUser(stack, owner, 'viewer');
  const developerUser = await dashboardUser(stack, owner, 'developer');
  otherSession = await signIn(otherUser);
  viewerSession = await signIn(viewerUser);
  developerSession = await signIn(developerUser);
  endedSessions.push(await signIn(removed));
  await removeMember(stack, owner.clientId, removed.userId);
  const signedOut = await signIn(ownerUser);
  const out = await send(stack.baseUrl, {
    method: 'POST', path: '/dashboard/logout', localAddress: nextClientIp(), body: `csrf=${encodeURIComponent(signedOut.csrf)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl, cookie: signedOut.cookie },
  });
  if (out.status !== 303) throw new Error(`dashboard sign-out: ${out.status}`);
  endedSessions.push(signedOut);
  ids.memberId = developerUser.userId;
  const invitation = await inviteMember(stack, owner.clientId, ownerUser.userId, { email: 'invited@example.test', role: 'viewer' });
  // The id the Team page's forms name an invitation by: the first 8 bytes of its token's hash.
  ids.invitationId = hashInvitationToken(invitation.token).subarray(0, 8).toString('hex');
  secrets.push(
    ...[ownerUser, otherUser, removed, viewerUser, developerUser].map((u) => ({ kind: 'dashboard password', value: u.password })),
    { kind: 'invitation token', value: invitation.token },
  );
  fp = await TableFingerprint.open(stack.config.databaseUrl!);
  temporalWrites = countTemporalWrites(stack.temporal);
}, 120_000);

afterAll(async () => {
  await fp?.close();
  if (h) {
    await registerSecrets(scenario, secrets);
    await writeReport(scenario, {
      fuzzedInputs: counts.fuzzedInputs, http5xx: counts.http5xx, partialWrites: counts.partialWrites,
      notes: [`${counts.cases} (route, credential) cases on ${appRoutes(h.stack.app).length} routes`, ...problems.slice(0, 20)],
    });
    await h.finish();
  }
  await daraja?.close();
});

type Session = { cookie: string; csrf: string };
let otherSession: Session;
let viewerSession: Session;
let developerSession: Session;
/** Sessions that ended: their person was removed from the store, or signed out. */
const endedSessions: Session[] = [];

/** A dashboard session of `user`: its cookie and its CSRF token. */
const signIn = (user: DashboardUser): Promise<Session> => signInHttp(h.stack.baseUrl, user, { localAddress: nextClientIp() });

/** Dashboard pages anyone may open or post: signing in, signing up, accepting an invitation. */
const publicDashboardRoutes = new Set(['/dashboard/login', '/dashboard/signup', '/dashboard/invitations/:token']);
/** Actions any role may take: they change only the person's own session or account. */
const anyRoleActions = new Set(['/dashboard/logout', '/dashboard/switch', '/dashboard/account/password', '/dashboard/account/sign-out-everywhere']);
/** What a dashboard action needs besides its CSRF token to reach the object its path names. */
const validForm: Record<string, string> = { '/dashboard/team/:userId/role': '&role=viewer' };
/** Actions only an owner may take: where money goes, the store's settings and its team. */
// Owners only, except assigning an unallocated M-Pesa payment, which a developer may do (docs/dashboard.md: no money moves).
const ownerOnly = (url: string) => /^\/dashboard\/(mobile-money|wallets|settings|team)(\/|$)/.test(url) && !url.startsWith('/dashboard/mobile-money/unallocated/');

const apiRoute = (route: AppRoute): RouteDef | undefined => allRoutes.find((r) => r.method === route.method && r.url === route.url);

/** The owner's object for a path parameter; `null` for parameters that name no store's object. */
function ownerParam(route: AppRoute, name: string): string | null {
  if (name === 'clientId') return owner.clientId;
  if (name === 'linkId') return ids.linkId!;
  if (name === 'index' || name === 'slot' || name === 'file' || name === 'token' || name === '*') return null;
  if (name === 'deliveryId') return newId('webhookDelivery');
  if (name === 'userId') return ids.memberId!;
  if (route.url.includes('/team/invitations/')) return ids.invitationId!;
  if (route.url.includes('/keys')) return ids.keyId!;
  if (route.url.includes('webhook')) return ids.endpointId!;
  if (route.url.includes('invoices')) return ids.invoiceId!;
  return ids.linkId!;
}

/** An id of the same shape that exists nowhere. */
function missingParam(route: AppRoute, name: string): string {
  if (name === 'clientId') return newId('store');
  if (name === 'deliveryId') return newId('webhookDelivery');
  if (name === 'userId') return newId('dashboardUser');
  if (route.url.includes('/team/invitations/')) return '0123456789abcdef';
  if (route.url.includes('/keys')) return newId('apiKey');
  if (route.url.includes('webhook')) return newId('webhookEndpoint');
  if (route.url.includes('invoices')) return newId('invoice');
  return newId('paymentLink');
}

function pathFor(route: AppRoute, which: 'owner' | 'missing'): string {
  const values: Record<string, string> = {};
  for (const p of pathParams(route.url)) {
    const own = ownerParam(route, p);
    values[p] = own === null ? ({ index: '3', slot: 'evm', file: 'USDT_BSC.svg', token: 'a'.repeat(40), '*': 'logos/x.svg' } as Record<string, string>)[p]! : which === 'owner' ? own : missingParam(route, p);
  }
  return fillPath(route.url, values);
}

/** Sends one request with a credential; checks no 5xx and that nothing changed. */
async function attempt(route: AppRoute, opts: { path: string; key?: string; pk?: string; cookie?: string; form?: string }): Promise<RawResponse> {
  const before = await settle(fp, 50, 3_000);
  const writes = temporalWrites.count;
  const body = route.method === 'GET' ? undefined : JSON.stringify(validBody(routeName(route), { merchant, solanaWallet, ...ids }));
  const query = opts.pk !== undefined ? `?pk=${encodeURIComponent(opts.pk)}` : '';
  const headers: Record<string, string> = { ...(opts.key !== undefined ? { 'x-api-key': opts.key } : {}), ...(opts.cookie ? { cookie: opts.cookie } : {}) };
  if (body !== undefined) headers['content-type'] = route.url.startsWith('/dashboard') ? 'application/x-www-form-urlencoded' : 'application/json';
  if (opts.cookie) headers.origin = h.stack.baseUrl;
  const res = await send(h.stack.baseUrl, { method: route.method, path: `${opts.path}${query}`, headers, body: route.url.startsWith('/dashboard') ? (body === undefined ? undefined : opts.form ?? '') : body, localAddress: nextClientIp() });
  counts.fuzzedInputs++;
  counts.cases++;
  const label = `${routeName(route)} [${opts.key ?? opts.pk ?? opts.cookie ?? 'nothing'}]`.replace(/(sk|pk)_(test|live)_\w+/g, '$1_$2_…');
  if (res.status >= 500) {
    counts.http5xx++;
    problems.push(`${label}: ${res.status} ${res.text.slice(0, 200)}`);
  }
  if (res.status >= 300) {
    const after = await fp.take();
    // Documented (docs/mobile-money.md): a C2B post to an unknown token is a 404 kept as a suspicious post.
    const allowed = new Set(res.status === 404 && route.url.startsWith('/v1/callbacks/c2b/') ? ['mpesa_c2b_suspicious_posts'] : []);
    const changed = TableFingerprint.changed(before, after, allowed);
    const started = temporalWrites.count - writes;
    if (changed.length > 0 || started > 0) {
      counts.partialWrites++;
      problems.push(`${label}: ${res.status} but changed ${changed.join(', ') || 'no table'} and made ${started} workflow starts/signals`);
    }
  }
  return res;
}

const shape = (res: RawResponse) => {
  const e = (res.json as { error?: { code?: string; message?: string; param?: string } } | undefined)?.error;
  return { status: res.status, code: e?.code, message: e?.message, param: e?.param };
};

function expectError(label: string, res: RawResponse, status: number, code: string): void {
  const problem = errorBodyProblem(res);
  const seen = { label, status: res.status, code: shape(res).code, problem };
  if (seen.status !== status || seen.code !== code || problem) problems.push(`${label}: expected ${status} ${code}, got ${JSON.stringify(seen)}`);
}

describe('every route, every wrong credential', () => {
  it('answers each with its exact status and code, shows another store’s objects as missing, and changes nothing', async () => {
    const routes = appRoutes(h.stack.app);
    const prefix = h.stack.config.keyPrefix;
    let secretRoutes = 0;
    let roleCases = 0;
    for (const route of routes) {
      const def = apiRoute(route);
      const auth = def?.auth ?? (route.url.startsWith('/dashboard') && !publicDashboardRoutes.has(route.url) ? 'session' : 'none');
      const own = pathFor(route, 'owner');
      const missing = pathFor(route, 'missing');
      const hasObject = pathParams(route.url).some((p) => ownerParam(route, p) !== null);
      const name = routeName(route);

      if (auth === 'secret') {
        secretRoutes++;
        expectError(`${name} no key`, await attempt(route, { path: own }), 401, 'missing_api_key');
        // (Trailing spaces are not a different key: HTTP strips them from every header value.)
        const altered = owner.keys.test.secretKey.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a'));
        for (const bad of ['not-a-key', `${prefix}_test_short`, `${prefix}_test_${'0'.repeat(40)}`, `Bearer ${owner.keys.test.secretKey}`, altered, `${prefix}_live_${owner.keys.test.secretKey.slice(`${prefix}_test_`.length)}`]) {
          expectError(`${name} malformed or unknown key`, await attempt(route, { path: own, key: bad }), 401, 'invalid_api_key');
        }
        expectError(`${name} revoked key`, await attempt(route, { path: own, key: revoked.secret }), 401, 'api_key_revoked');
        expectError(`${name} publishable key`, await attempt(route, { path: own, key: owner.keys.test.publishableKey }), 403, 'wrong_key_kind');
        if (hasObject) {
          // Another store, and this store's other environment: exactly the answer for an id that does not exist.
          for (const [who, key] of [['another store', other.keys.test.secretKey], ['the live key', owner.keys.live.secretKey]] as const) {
            if (who === 'the live key' && pathParams(route.url).every((p) => p === 'clientId')) continue; // the store's own settings and wallets, live
            const seen = await attempt(route, { path: own, key });
            const absent = await attempt(route, { path: missing, key });
            // Simulating is refused to every live key before any lookup (documented 403), so it tells nothing either.
            const [status, code] = who === 'the live key' && route.url.endsWith('/simulate-payment') ? [403, 'live_mode_forbidden'] : [404, 'not_found'];
            expectError(`${name} ${who} with the owner's ids`, seen, status, code);
            const same = JSON.stringify(shape(seen)) === JSON.stringify(shape(absent));
            if (!same) problems.push(`${name} ${who}: the owner's object answers ${JSON.stringify(shape(seen))}, a missing one ${JSON.stringify(shape(absent))}`);
          }
        } else if (route.method === 'GET') {
          // Lists: another store's key and the live key see none of the owner's test objects.
          for (const key of [other.keys.test.secretKey, owner.keys.live.secretKey]) {
            const res = await attempt(route, { path: own, key });
            const leaked = Object.values(ids).filter((id) => /^(pl|inv|we|key)_/.test(id) && res.text.includes(id));
            if (leaked.length > 0) problems.push(`${name}: another store or environment sees ${leaked.join(', ')}`);
          }
        }
      } else if (auth === 'publishable') {
        expectError(`${name} no pk`, await attempt(route, { path: own }), 401, 'missing_api_key');
        expectError(`${name} malformed pk`, await attempt(route, { path: own, pk: 'pk_nope' }), 401, 'invalid_api_key');
        expectError(`${name} unknown pk`, await attempt(route, { path: own, pk: `pk_test_${'0'.repeat(40)}` }), 401, 'invalid_api_key');
        expectError(`${name} revoked pk`, await attempt(route, { path: own, pk: revoked.publishable }), 401, 'api_key_revoked');
        expectError(`${name} secret key as pk`, await attempt(route, { path: own, pk: owner.keys.test.secretKey }), 403, 'wrong_key_kind');
        const seen = await attempt(route, { path: own, pk: other.keys.test.publishableKey });
        const absent = await attempt(route, { path: missing, pk: other.keys.test.publishableKey });
        expectError(`${name} another store's pk`, seen, 404, 'not_found');
        if (JSON.stringify(shape(seen)) !== JSON.stringify(shape(absent))) problems.push(`${name}: another store's pk tells the owner's store from a missing one`);
      } else if (auth === 'session') {
        // No session, a forged cookie, a key sent instead, a session that ended (signed out, or its
        // person removed from the store): sign-in page (GET) or nothing done (POST).
        for (const cookie of [undefined, 'malipo_dashboard=not-a-token', `malipo_dashboard=${'A'.repeat(43)}`, ...endedSessions.map((e) => e.cookie)]) {
          const res = await attempt(route, { path: own, cookie, key: owner.keys.test.secretKey });
          const location = String(res.headers.location ?? '');
          if (res.status !== 303 || location !== '/dashboard/login') problems.push(`${name} with ${cookie ?? 'no cookie'}: ${res.status} → ${location}`);
        }
        if (route.method === 'POST' && !anyRoleActions.has(route.url)) {
          // A role below the action's, with the page's own token: 403 "Not allowed", nothing done.
          const below: [string, Session][] = [['viewer', viewerSession], ...(ownerOnly(route.url) ? [['developer', developerSession] as [string, Session]] : [])];
          for (const [role, session] of below) {
            roleCases++;
            const res = await attempt(route, { path: own, cookie: session.cookie, form: `csrf=${encodeURIComponent(session.csrf)}` });
            if (res.status !== 403 || !res.text.includes('Not allowed')) problems.push(`${name} as a ${role}: ${res.status} ${res.text.includes('Not allowed') ? '' : '(not the "Not allowed" page)'}`);
          }
        }
        if (hasObject) {
          // Another store's session with this store's ids: the same page as an id that does not exist.
          const form = `csrf=${encodeURIComponent(otherSession.csrf)}${validForm[route.url] ?? ''}`;
          const seen = await attempt(route, { path: own, cookie: otherSession.cookie, form });
          const absent = await attempt(route, { path: missing, cookie: otherSession.cookie, form });
          // CSRF tokens are salted afresh on every page, so they are left out of the comparison.
          const page = (r: RawResponse) => ({
            status: r.status, html: String(r.headers['content-type'] ?? '').startsWith('text/html'),
            text: r.text.replace(/req_[0-9a-z]+/g, 'req').replace(/(we|key)_[0-9a-z]{24}/g, 'id').replace(/name="csrf" value="[^"]*"/g, 'name="csrf" value=""'),
          });
          if (seen.status !== 404 || JSON.stringify(page(seen)) !== JSON.stringify(page(absent))) {
            const [a, b] = [page(seen).text, page(absent).text];
            let at = 0;
            while (at < a.length && a[at] === b[at]) at++;
            problems.push(`${name}: another store's session sees ${seen.status}, a missing id ${absent.status}${a === b ? '' : ` (pages differ: ${JSON.stringify(a.slice(Math.max(0, at - 80), at + 80))} vs ${JSON.stringify(b.slice(Math.max(0, at - 80), at + 80))})`}`);
          }
        }
      } else {
        // Public routes: a key of any kind changes nothing about the answer (a POST on a missing
        // object, so that the valid body is refused the same way each time and writes nothing).
        const path = route.method === 'GET' ? own : missing;
        const plain = await attempt(route, { path });
        for (const key of [revoked.secret, other.keys.test.secretKey, 'not-a-key']) {
          const res = await attempt(route, { path, key });
          if (res.status !== plain.status) problems.push(`${name}: public route answers ${res.status} with a key, ${plain.status} without`);
        }
      }
    }
    expect(secretRoutes).toBeGreaterThan(25);
    expect(roleCases).toBeGreaterThan(20);
    expect(problems).toEqual([]);
  });
});
