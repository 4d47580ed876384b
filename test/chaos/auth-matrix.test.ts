import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RouteDef } from '../../api/route.js';
import { allRoutes } from '../../api/routes/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { newId } from '../../domain/ids.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { sandboxPaybill } from '../helpers/daraja.js';
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
  otherSession = await signIn(other.keys.test.secretKey);
  const doomed = await api('POST', '/v1/keys', { kind: 'secret', name: 'session then revoked' });
  revokedSession = await signIn(doomed.key);
  await api('POST', `/v1/keys/${doomed.id}/revoke`, {});
  secrets.push({ kind: 'secret API key', value: doomed.key });
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

let otherSession: { cookie: string; csrf: string };
let revokedSession: { cookie: string; csrf: string };

/** A dashboard session opened with `key`: its cookie and its CSRF token. */
async function signIn(key: string): Promise<{ cookie: string; csrf: string }> {
  const { baseUrl } = h.stack;
  const res = await send(baseUrl, {
    method: 'POST', path: '/dashboard/login', localAddress: nextClientIp(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl }, body: new URLSearchParams({ secretKey: key }).toString(),
  });
  const cookie = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('malipo_dashboard='))?.split(';')[0];
  if (res.status !== 303 || !cookie) throw new Error(`dashboard sign-in: ${res.status}`);
  const page = await send(baseUrl, { method: 'GET', path: '/dashboard', headers: { cookie } });
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '' };
}

const apiRoute = (route: AppRoute): RouteDef | undefined => allRoutes.find((r) => r.method === route.method && r.url === route.url);

/** The owner's object for a path parameter; `null` for parameters that name no store's object. */
function ownerParam(route: AppRoute, name: string): string | null {
  if (name === 'clientId') return owner.clientId;
  if (name === 'linkId') return ids.linkId!;
  if (name === 'index' || name === 'slot' || name === 'file' || name === 'token' || name === '*') return null;
  if (name === 'deliveryId') return newId('webhookDelivery');
  if (route.url.includes('/keys')) return ids.keyId!;
  if (route.url.includes('webhook')) return ids.endpointId!;
  if (route.url.includes('invoices')) return ids.invoiceId!;
  return ids.linkId!;
}

/** An id of the same shape that exists nowhere. */
function missingParam(route: AppRoute, name: string): string {
  if (name === 'clientId') return newId('store');
  if (name === 'deliveryId') return newId('webhookDelivery');
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
    const changed = TableFingerprint.changed(before, after);
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
    for (const route of routes) {
      const def = apiRoute(route);
      const auth = def?.auth ?? (route.url.startsWith('/dashboard') ? 'session' : 'none');
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
        // No session, a forged cookie, a key sent instead, a session whose key was revoked:
        // sign-in page (GET) or nothing done (POST).
        if (route.url === '/dashboard/login') continue;
        for (const cookie of [undefined, 'malipo_dashboard=not-a-token', `malipo_dashboard=${'A'.repeat(43)}`, revokedSession.cookie]) {
          const res = await attempt(route, { path: own, cookie, key: owner.keys.test.secretKey });
          const location = String(res.headers.location ?? '');
          if (res.status !== 303 || location !== '/dashboard/login') problems.push(`${name} with ${cookie ?? 'no cookie'}: ${res.status} → ${location}`);
        }
        if (hasObject) {
          // Another store's session with this store's ids: the same page as an id that does not exist.
          const seen = await attempt(route, { path: own, cookie: otherSession.cookie, form: `csrf=${encodeURIComponent(otherSession.csrf)}` });
          const absent = await attempt(route, { path: missing, cookie: otherSession.cookie, form: `csrf=${encodeURIComponent(otherSession.csrf)}` });
          // CSRF tokens are salted afresh on every page, so they are left out of the comparison.
          const page = (r: RawResponse) => ({
            status: r.status, html: String(r.headers['content-type'] ?? '').startsWith('text/html'),
            text: r.text.replace(/req_[0-9a-z]+/g, 'req').replace(/(we|key)_[0-9a-z]{24}/g, 'id').replace(/name="csrf" value="[^"]*"/g, 'name="csrf" value=""'),
          });
          if (seen.status !== 404 || JSON.stringify(page(seen)) !== JSON.stringify(page(absent))) {
            problems.push(`${name}: another store's session sees ${seen.status}, a missing id ${absent.status}${seen.text === absent.text ? '' : ' (pages differ)'}`);
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
    expect(problems).toEqual([]);
  });
});
