import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import type { RouteDef } from '../../api/route.js';
import { allRoutes } from '../../api/routes/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { startTronGridEmulator, type TronGridEmulator } from '../../emulators/trongrid/server.js';
import { deployTestToken, startAnvil, type Anvil } from '../helpers/anvil.js';
import { inviteMember } from '../../services/dashboard/team.js';
import { sandboxPaybill } from '../helpers/daraja.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { solanaWallet } from '../helpers/fixtures.js';
import {
  apiCaller, appRoutes, connectEveryRail, countTemporalWrites, errorBodyProblem, fillPath, nextClientIp, pathParams, routeName, send, settle, startHostileStack,
  TableFingerprint, type AppRoute, type HostileStack, type RawRequest, type RawResponse,
} from './hostile/common.js';
import {
  brokenEncodings, contentTypes, hostileHeaderValue, hostileSegment, hostileString, hostileValue, nest, pctEncode, protoKeys, rawNumberTexts,
  unicodeStrings,
} from './hostile/inputs.js';
import { validBody, validFields } from './hostile/seeds.js';
import { registerSecrets, sized, writeReport } from './harness/report.js';

/**
 * Property-based fuzzing of every route the app serves (read from the app, so a new route is
 * fuzzed without editing this file): body, query, headers and path parameters, authenticated
 * with a valid key so the input reaches validation. For each input:
 * - never a 5xx;
 * - a 4xx is the documented error body (JSON API) or an HTML error page (dashboard, checkout page);
 * - a 4xx, and any GET, changes nothing: every table's rows and every workflow start or signal;
 * - a 2xx of the JSON API matches the route's documented response schema (a genuine write).
 */
const scenario = 'fuzz-endpoints';
const runsPerRoute = sized(24, 140);
const merchant = sandboxPaybill('fuzz-endpoints');

let h: HostileStack;
let daraja: DarajaEmulator;
let trongrid: TronGridEmulator;
let anvil: Anvil;
let store: CreatedStore;
let key: string;
let fp: TableFingerprint;
let temporalWrites: { readonly count: number };
let current: Record<string, string>;
const real: Record<string, string> = {};
let dashboard: { cookie: string; csrf: string } = { cookie: '', csrf: '' };
const formFields = new Map<string, Set<string>>();
/** The actions of the forms that post (the others are filters, read with GET). */
const postForms = new Set<string>();

const counts = { fuzzedInputs: 0, http5xx: 0, partialWrites: 0, backgroundCoincidences: 0, status: {} as Record<string, number> };
const problems: string[] = [];
const counterexamples: Array<{ route: string; counterexample: unknown; error: string }> = [];
const secrets: Array<{ kind: string; value: string }> = [];

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, h.stack.baseUrl) });
  trongrid = await startTronGridEmulator();
  anvil = await startAnvil();
  const token = await deployTestToken(anvil, { decimals: 18 });
  const encryptionKey = formatKeyEntry(generateKey());
  secrets.push({ kind: 'ENCRYPTION_KEY', value: encryptionKey });
  h = await startHostileStack(scenario, {
    MPESA_SANDBOX_URL: daraja.url,
    ENCRYPTION_KEY: encryptionKey,
    RPC_URL_USDT_BSC_TEST: anvil.url,
    USDT_CONTRACT_USDT_BSC_TEST: token.address,
    RPC_URL_USDT_TRON_TEST: trongrid.url,
    USDT_CONTRACT_USDT_TRON_TEST: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf',
  });
  const { stack } = h;
  store = await stack.createStore('Fuzz shop');
  key = store.keys.test.secretKey;
  secrets.push({ kind: 'secret API key', value: key }, { kind: 'secret API key', value: store.keys.live.secretKey });
  secrets.push({ kind: 'M-Pesa consumer key', value: merchant.consumerKey }, { kind: 'M-Pesa consumer secret', value: merchant.consumerSecret });
  secrets.push({ kind: 'M-Pesa passkey', value: merchant.passkey });
  const api = apiCaller(stack, key);
  const xpubs = await connectEveryRail(api, store.clientId, merchant);
  const link = await api('POST', '/v1/payment-links', { usdtAmount: '3.25', enabledRails: ['USDT_BSC', 'USDT_TRON', 'MOBILE_MONEY'], merchantRef: 'fuzz-1' });
  const paying = await api('POST', '/v1/payment-links', { mobileMoneyAmount: 50, enabledRails: ['MOBILE_MONEY'] });
  const pay = await api('POST', `/v1/merchant/payment-links/${paying.id}/pay/mobile-money`, { phoneNumber: '254712000001' });
  const prompt = daraja.state.prompts.get(pay.checkoutRequestId)!;
  const invoice = await api('POST', '/v1/invoices', { amount: '2', network: 'BSC' });
  const endpoint = await api('POST', '/v1/webhook-endpoints', { url: 'https://shop.example/hooks' });
  const spare = await api('POST', '/v1/keys', { kind: 'secret', name: 'fuzz spare' });
  await api('POST', '/v1/wallets/derive', { index: 3 });
  Object.assign(real, {
    linkId: link.id, payingLinkId: paying.id, invoiceId: invoice.id, endpointId: endpoint.id, keyId: spare.id, clientId: store.clientId,
    token: prompt.callbackUrl.split('/').pop()!, checkoutRequestId: pay.checkoutRequestId, merchantRequestId: prompt.merchantRequestId,
    pk: store.keys.test.publishableKey, evmXpub: xpubs.evm, tronXpub: xpubs.tron,
  });
  secrets.push({ kind: 'callback token', value: real.token! }, { kind: 'webhook secret', value: endpoint.secret }, { kind: 'secret API key', value: spare.key });
  // Dashboard people: a colleague whose role and membership the Team forms change, and an open
  // invitation (for someone with no account yet) for the invitation page and its cancel form.
  const inviter = await dashboardUser(stack, store);
  const colleague = await dashboardUser(stack, store, 'developer');
  const invitation = await inviteMember(stack, store.clientId, inviter.userId, { email: 'fuzz-invited@example.test', role: 'viewer' });
  Object.assign(real, { userId: colleague.userId, invitationToken: invitation.token });
  secrets.push(
    { kind: 'dashboard password', value: inviter.password }, { kind: 'dashboard password', value: colleague.password },
    { kind: 'invitation token', value: invitation.token },
  );
  await signInDashboard();
  // Every dashboard page's forms: signed in, and the pages for visitors (sign-in, sign-up, an invitation).
  for (const page of appRoutes(stack.app).filter((r) => r.method === 'GET' && r.url.startsWith('/dashboard'))) {
    const path = fillPath(page.url, Object.fromEntries(pathParams(page.url).map((p) => [p, realParam(page, p)])));
    for (const cookie of [dashboard.cookie, undefined]) {
      const res = await send(stack.baseUrl, { method: 'GET', path, headers: cookie ? { cookie } : {} });
      collectForms(res.text);
    }
  }
  fp = await TableFingerprint.open(stack.config.databaseUrl!);
  temporalWrites = countTemporalWrites(stack.temporal);
  current = await settle(fp);
}, 180_000);

afterAll(async () => {
  await fp?.close();
  if (h) {
    await writeFile(join(h.dir, 'counterexamples.json'), JSON.stringify(counterexamples, null, 2));
    await registerSecrets(scenario, secrets.filter((s) => s.value));
    await writeReport(scenario, {
      fuzzedInputs: counts.fuzzedInputs,
      http5xx: counts.http5xx,
      partialWrites: counts.partialWrites,
      notes: [
        `${appRoutes(h.stack.app).length} routes, ${runsPerRoute} generated inputs each (plus shrinking and confirmations)`,
        `answers by status: ${Object.entries(counts.status).sort().map(([s, n]) => `${s}×${n}`).join(', ')}`,
        `${counts.backgroundCoincidences} changes during a refused request not reproduced by a second identical request (a workflow of an earlier valid write)`,
        ...problems.slice(0, 20),
      ],
    });
    await h.finish();
  }
  await daraja?.close();
  await trongrid?.close();
  await anvil?.stop();
});

/**
 * Signs a new owner of the store in (a new person each time: the per-email sign-in limit would
 * refuse one person signing in again and again), for the fuzz's dashboard requests.
 */
async function signInDashboard(): Promise<void> {
  const user = await dashboardUser(h.stack, store);
  secrets.push({ kind: 'dashboard password', value: user.password });
  const session = await signInHttp(h.stack.baseUrl, user, { localAddress: nextClientIp() });
  if (!session.csrf) throw new Error('no CSRF token on the dashboard');
  dashboard = session;
  collectForms((await send(h.stack.baseUrl, { method: 'GET', path: '/dashboard', headers: { cookie: session.cookie } })).text);
}

/**
 * Actions after which the fuzz's own session may have ended or moved (signed out, switched to
 * another environment, replaced by a sign-in, a sign-up or an accepted invitation): the next
 * input gets a fresh session.
 */
const movesTheSession = /^\/dashboard\/(logout|switch|login|signup|invitations\/|account\/)/;

/** The fields of every form a dashboard page shows, by the form's action. */
function collectForms(page: string): void {
  for (const form of page.matchAll(/<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)) {
    if (/^<form[^>]*method="post"/i.test(form[0])) postForms.add(form[1]!);
    const fields = formFields.get(form[1]!) ?? new Set<string>();
    for (const f of form[2]!.matchAll(/name="([^"]+)"/g)) fields.add(f[1]!);
    formFields.set(form[1]!, fields);
  }
}

// ---------------------------------------------------------------------------------------------
// What each route takes

interface DocumentedSchema {
  $ref?: string;
  properties?: Record<string, unknown>;
}
const openapi = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; in: string }>; requestBody?: { content?: Record<string, { schema?: DocumentedSchema }> } }>>;
  components?: { schemas?: Record<string, DocumentedSchema> };
};
/** A body schema as documented: inline, or a `#/components/schemas/…` reference. */
const resolved = (schema: DocumentedSchema | undefined): DocumentedSchema | undefined =>
  schema?.$ref ? openapi.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] : schema;
const toPattern = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

function documented(route: AppRoute) {
  const entry = Object.entries(openapi.paths).find(([p]) => toPattern(p) === route.url)?.[1]?.[route.method.toLowerCase()];
  return {
    fields: Object.keys(resolved(entry?.requestBody?.content?.['application/json']?.schema)?.properties ?? {}),
    query: (entry?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
  };
}

const apiRoute = (route: AppRoute): RouteDef | undefined => allRoutes.find((r) => r.method === route.method && r.url === route.url);
const isDashboard = (route: AppRoute) => route.url.startsWith('/dashboard');
/** Routes that answer a person with an HTML page, errors included. */
const isPage = (route: AppRoute) => isDashboard(route) || ['/p/:id', '/p/:id/panel', '/p/:id/pay/mobile-money'].includes(route.url);

/** A valid body per operation, mutated one field at a time so the fuzz reaches deep validation. */
const seedBody = (route: AppRoute) => validBody(routeName(route), { ...real, merchant, solanaWallet });

/** This store's real value for a path parameter, so the fuzz reaches handlers on real objects. */
function realParam(route: AppRoute, name: string): string {
  if (name === 'clientId') return real.clientId!;
  if (name === 'linkId') return real.payingLinkId!;
  if (name === 'token') return route.url.startsWith('/dashboard/invitations/') ? real.invitationToken! : real.token!;
  if (name === 'userId') return real.userId!;
  if (name === 'index') return '3';
  if (name === 'slot') return 'evm';
  if (name === 'file') return 'USDT_BSC.svg';
  if (name === 'deliveryId') return 'wd_000000000000000000000000';
  if (name === '*') return 'checkout/checkout.js';
  if (route.url.includes('/keys')) return real.keyId!;
  if (route.url.includes('webhook')) return real.endpointId!;
  if (route.url.includes('invoices')) return real.invoiceId!;
  return real.linkId!;
}

// ---------------------------------------------------------------------------------------------
// Inputs

interface FuzzCase {
  params: Record<string, string>;
  query: Array<[string, string]>;
  /** Undefined: no body. A string: sent as is. */
  body: string | undefined;
  /** null: no content-type header. */
  contentType: string | null;
  headers: Record<string, string>;
  /** Dashboard: send the session cookie and the CSRF token (false: a visitor or a forged form). */
  withSession: boolean;
}

function jsonBody(route: AppRoute, fields: string[]): fc.Arbitrary<string | undefined> {
  const seed = seedBody(route);
  const names = [...new Set([...fields, ...Object.keys(seed)])];
  const field = names.length ? fc.constantFrom(...names) : hostileString;
  const asText = (v: unknown) => JSON.stringify(v);
  return fc.oneof(
    // One documented field replaced by a hostile value (or removed): the rest stays valid.
    { weight: 5, arbitrary: fc.tuple(field, hostileValue(3), fc.boolean()).map(([f, v, drop]) => {
      const b: Record<string, unknown> = { ...seed };
      if (drop) delete b[f];
      else b[f] = v;
      return asText(b);
    }) },
    // One field of the valid body (or a metadata key and value) set to text PostgreSQL or JSON may not store as is.
    { weight: 3, arbitrary: fc.tuple(field, fc.constantFrom(...unicodeStrings)).map(([f, u]) => asText({ ...seed, [f]: f === 'metadata' ? { [u]: u } : u })) },
    // Documented fields, every value hostile.
    { weight: 3, arbitrary: fc.dictionary(field, hostileValue(2), { maxKeys: Math.max(1, names.length) }).map(asText) },
    // The valid seed plus a field nobody documented, or a prototype-pollution key.
    { weight: 1, arbitrary: fc.tuple(fc.oneof(hostileString, fc.constantFrom(...protoKeys, 'environment')), hostileValue(1)).map(([k, v]) => asText({ ...seed, [k]: v })) },
    // Texts JSON.stringify never writes.
    { weight: 3, arbitrary: fc.oneof(
      fc.tuple(field, fc.constantFrom(...rawNumberTexts)).map(([f, n]) => asText({ ...seed, [f]: 0 }).replace(`"${f}":0`, `"${f}":${n}`)),
      fc.tuple(field, hostileValue(1)).map(([f, v]) => `${asText(seed).slice(0, -1)}${Object.keys(seed).length ? ',' : ''}"${f}":${asText(v) ?? 'null'}}`),
      fc.constantFrom(
        '{"__proto__":{"isAdmin":true}}', '{"constructor":{"prototype":{"isAdmin":true}}}', `{"metadata":{"__proto__":{"x":1}}}`,
        '{', '}', '{"a":', '[]', '[{}]', '"text"', '42', 'null', 'true', '', ' ', '\u0000', '{"a":1,}', "{'a':1}", '{"a":NaN}', '{"a":Infinity}',
        '{"a":undefined}', '{"a":0x10}', '\uFEFF{}', '{"a":"\\ud800"}', '{"a":"\\u0000"}', `{"a":${'['.repeat(30)}${']'.repeat(30)}}`,
      ),
      fc.constant(null).map(() => asText({ ...seed, filler: 'x'.repeat(1024 * 1024) })),
      fc.constant(null).map(() => asText(nest(25))),
    ) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** Valid values for the fields only the dashboard's forms have (accounts, team, the switcher). */
const dashboardFields: Record<string, string> = { email: 'fuzz-new@example.test', role: 'viewer', environment: 'test', storeName: 'Fuzz shop two' };

function formBody(route: AppRoute): fc.Arbitrary<string | undefined> {
  const pattern = new RegExp(`^${route.url.replace(/:[A-Za-z]+/g, '[^/]+')}$`);
  const fields = [...new Set([...formFields].filter(([action]) => pattern.test(action)).flatMap(([, f]) => [...f]))].filter((f) => f !== 'csrf');
  const field = fields.length ? fc.constantFrom(...fields) : hostileString;
  const value = fc.oneof(hostileString, fc.constantFrom(...rawNumberTexts), hostileValue(0).map((v) => String(v)));
  // A valid form (each field's value from the API's valid bodies), then one field made hostile.
  const known = { ...validFields({ ...real, merchant, solanaWallet }), ...dashboardFields };
  const validPairs = (except: string) => fields.filter((f) => f !== except && f in known).flatMap((f) => {
    const v = known[f];
    return (Array.isArray(v) ? v : v !== null && typeof v === 'object' ? [] : [v]).map((x) => `${pctEncode(f)}=${pctEncode(String(x))}`);
  });
  return fc.oneof(
    { weight: 4, arbitrary: fc.tuple(field, fc.oneof(fc.constantFrom(...unicodeStrings), value)).map(([f, v]) => [...validPairs(f), `${pctEncode(f)}=${pctEncode(v)}`].join('&')) },
    { weight: 6, arbitrary: fc.array(fc.tuple(field, value), { maxLength: 6 }).map((pairs) => pairs.map(([k, v]) => `${pctEncode(k)}=${pctEncode(v)}`).join('&')) },
    { weight: 1, arbitrary: fc.constantFrom(...brokenEncodings, `a=${'x'.repeat(40 * 1024)}`, '&&&', '=', 'a=1&a=2&a=3', '__proto__[x]=1', 'constructor[prototype][x]=1') },
    { weight: 1, arbitrary: jsonBody(route, fields) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

function caseFor(route: AppRoute): fc.Arbitrary<FuzzCase> {
  const params = pathParams(route.url);
  const doc = documented(route);
  const form = isDashboard(route);
  const paramValue = (p: string): fc.Arbitrary<string> =>
    fc.oneof({ weight: 3, arbitrary: fc.constant(pctEncode(realParam(route, p))) }, { weight: 3, arbitrary: hostileSegment });
  const paramArb = fc.record(Object.fromEntries(params.map((p) => [p, paramValue(p)])) as Record<string, fc.Arbitrary<string>>);
  const queryNames = [...doc.query, 'status', 'limit', 'page'];
  const queryArb = fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...queryNames), hostileString.map(pctEncode), fc.constantFrom(...protoKeys, 'pk', 'signedOut', 'everywhere', 'passwordChanged', 'welcome', 'joined')),
      fc.oneof(hostileSegment, fc.constantFrom('CONFIRMED', 'PENDING', '1', '0', '100', '101', '-1', 'TRON', 'BSC', pctEncode(real.pk ?? 'pk'))),
    ),
    { maxLength: 4 },
  );
  const bodyArb = route.method === 'GET' ? fc.constant(undefined) : form ? formBody(route) : jsonBody(route, doc.fields);
  const defaultType = form ? 'application/x-www-form-urlencoded' : 'application/json';
  const typeArb = fc.oneof({ weight: 6, arbitrary: fc.constant(defaultType) }, { weight: 2, arbitrary: fc.constantFrom(...contentTypes) }, { weight: 1, arbitrary: fc.constant(null) });
  const headersArb = fc.record(
    {
      'idempotency-key': fc.oneof(fc.uuid(), hostileHeaderValue),
      'x-request-id': hostileHeaderValue,
      accept: fc.constantFrom('text/html', '*/*', 'application/json', '\u00ff'),
      'x-forwarded-for': fc.constantFrom('127.0.0.1', '::1', '1.1.1.1, 10.0.0.1', 'garbage'),
    },
    { requiredKeys: [] },
  );
  return fc.record({ params: paramArb, query: queryArb, body: bodyArb, contentType: typeArb, headers: headersArb, withSession: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }) });
}

function requestOf(route: AppRoute, c: FuzzCase, idempotencySuffix = ''): RawRequest {
  const query = c.query.map(([k, v]) => `${k}=${v}`).join('&');
  const headers: Record<string, string> = { 'x-api-key': key, ...c.headers };
  if (headers['idempotency-key'] !== undefined) headers['idempotency-key'] += idempotencySuffix;
  let body = c.body;
  if (body !== undefined && isDashboard(route) && c.withSession && !body.includes('csrf=')) body = `csrf=${encodeURIComponent(dashboard.csrf)}${body ? '&' : ''}${body}`;
  if (isDashboard(route) && c.withSession) Object.assign(headers, { cookie: dashboard.cookie, origin: h.stack.baseUrl });
  if (body !== undefined && c.contentType !== null) headers['content-type'] = c.contentType;
  return { method: route.method, path: `${fillPath(route.url, c.params)}${query ? `?${query}` : ''}`, headers, body, localAddress: nextClientIp() };
}

// ---------------------------------------------------------------------------------------------
// The property

/** Registers every secret a 2xx answer shows (a new key, a webhook secret) for the secret scan. */
function collectSecrets(json: unknown): void {
  const body = (json ?? {}) as Record<string, unknown>;
  for (const field of ['key', 'secret', 'secretKey']) {
    const v = body[field];
    if (typeof v === 'string' && /^(sk_(test|live)_|whsec_)/.test(v)) secrets.push({ kind: v.startsWith('whsec_') ? 'webhook secret' : 'secret API key', value: v });
  }
}

/** What is wrong with one answer, or null. Also counts it and keeps the fingerprint current. */
async function exercise(route: AppRoute, c: FuzzCase): Promise<string | null> {
  const req = requestOf(route, c);
  const before = current;
  const writes = temporalWrites.count;
  const res = await send(h.stack.baseUrl, req);
  counts.fuzzedInputs++;
  counts.status[res.status] = (counts.status[res.status] ?? 0) + 1;
  if (res.status >= 500) {
    counts.http5xx++;
    current = await settle(fp);
    return `${res.status}: ${res.text.slice(0, 300)}`;
  }
  if (isDashboard(route) && route.method === 'POST' && c.withSession && res.status >= 300 && res.status < 400 && movesTheSession.test(route.url)) await signInDashboard();
  const writes2xx = route.method !== 'GET' && res.status < 400;
  if (writes2xx) {
    collectSecrets(res.json);
    current = await settle(fp);
    const def = apiRoute(route);
    const schema = def?.responses[res.status]?.schema;
    if (def && res.status < 300) {
      if (!schema && res.status !== 204) return `${res.status} not documented for this operation`;
      const parsed = schema?.safeParse(res.json);
      if (parsed && !parsed.success) return `${res.status} body does not match the documented response: ${parsed.error.issues[0]?.message} at ${parsed.error.issues[0]?.path.join('.')}`;
    }
    return null;
  }
  // A refusal (or a read): the documented body, and nothing changed.
  if (res.status >= 400) {
    const html = String(res.headers['content-type'] ?? '').startsWith('text/html');
    // A page answers with an HTML page; what is refused before any route runs (a path the
    // router cannot match, headers over the limit) gets the JSON error body on pages too.
    if (!isPage(route) || !html) {
      const problem = errorBodyProblem(res);
      if (problem) return `${res.status}: ${problem}`;
    }
  }
  const after = await fp.take();
  current = after;
  // Documented: a non-400 refusal of an Idempotency-Key request is recorded to be replayed.
  const allowed = new Set(req.headers?.['idempotency-key'] !== undefined && res.status !== 400 && res.status < 500 ? ['idempotency_keys'] : []);
  // Documented (docs/mobile-money.md): a C2B post to an unknown token is a 404 kept as a suspicious post.
  if (res.status === 404 && route.url.startsWith('/v1/callbacks/c2b/')) allowed.add('mpesa_c2b_suspicious_posts');
  // Documented (docs/checkout.md, "The Dynamic QR"): the first view of a link's M-Pesa QR at the
  // amount now due draws it and keeps it (a part payment meanwhile makes a new amount); later views read it.
  if (res.status === 200 && route.url === '/p/:id/mpesa-qr.png') allowed.add('mpesa_dynamic_qr');
  const changed = TableFingerprint.changed(before, after, allowed);
  const started = temporalWrites.count - writes;
  if (changed.length === 0 && started === 0) return null;
  // Either this request wrote, or a workflow of an earlier valid write did meanwhile: the same
  // request again, once things are quiet (a new Idempotency-Key, so it runs again), tells them apart.
  const quiet = await settle(fp);
  const writes2 = temporalWrites.count;
  const res2 = await send(h.stack.baseUrl, requestOf(route, c, '-again'));
  counts.fuzzedInputs++;
  const after2 = await fp.take();
  current = after2;
  const changed2 = TableFingerprint.changed(quiet, after2, allowed);
  const started2 = temporalWrites.count - writes2;
  const what = `${res.status} (${(res.json as { error?: { code?: string } } | undefined)?.error?.code ?? 'page'}) but changed ${changed.join(', ') || 'no table'} and made ${started} workflow starts/signals`;
  if (res2.status >= 400 && (changed2.length > 0 || started2 > 0)) {
    counts.partialWrites++;
    return `${what}; again: ${res2.status}, changed ${changed2.join(', ') || 'no table'}, ${started2} starts/signals`;
  }
  if (res2.status < 400) return `${what}; the same request again answered ${res2.status}: not reproducible, look at it`;
  counts.backgroundCoincidences++;
  return null;
}

describe('regressions found by the fuzzer', () => {
  /** A request, its answer checked against the documented body, and that nothing changed. */
  async function refused(req: RawRequest, status: number, code: string): Promise<void> {
    const before = await settle(fp);
    const res = await send(h.stack.baseUrl, { localAddress: nextClientIp(), ...req, headers: { 'x-api-key': key, ...req.headers } });
    counts.fuzzedInputs++;
    expect({ status: res.status, code: (res.json as { error?: { code?: string } } | undefined)?.error?.code, problem: errorBodyProblem(res) }).toEqual({ status, code, problem: null });
    expect(TableFingerprint.changed(before, await fp.take())).toEqual([]);
  }

  it('a path the router cannot decode is the documented 404, not Fastify’s own body (was 400 FST_ERR_BAD_URL)', async () => {
    // fast-check counterexamples: GET /v1/payment-links/:id {id: "%"}; PUT …/clients/:clientId/wallets/evm {clientId: "%ED%A0%80"} (a lone surrogate).
    await refused({ method: 'GET', path: '/v1/payment-links/%' }, 404, 'not_found');
    await refused({ method: 'PUT', path: '/v1/merchant/clients/%ED%A0%80/wallets/evm', headers: { 'content-type': 'application/json' }, body: '{"xpub":"x"}' }, 404, 'not_found');
    await refused({ method: 'POST', path: '/dashboard/wallets/%/disconnect', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf=x' }, 404, 'not_found');
  });

  it('text PostgreSQL cannot store (NUL, unpaired surrogates) is a 400 naming the field, in JSON bodies and forms', async () => {
    const json = { 'content-type': 'application/json' };
    const link = (extra: Record<string, unknown>) => JSON.stringify({ usdtAmount: '1', enabledRails: ['USDT_BSC'], ...extra });
    await refused({ method: 'POST', path: '/v1/payment-links', headers: json, body: link({ merchantRef: 'a\u0000b' }) }, 400, 'invalid_field');
    await refused({ method: 'POST', path: '/v1/payment-links', headers: json, body: link({ metadata: { note: '\u0000' } }) }, 400, 'invalid_field');
    await refused({ method: 'POST', path: '/v1/payment-links', headers: json, body: link({ metadata: { 'k\u0000': 1 } }) }, 400, 'invalid_field');
    await refused({ method: 'POST', path: '/v1/payment-links', headers: json, body: link({ metadata: { note: '\ud800' } }) }, 400, 'invalid_field');
    await refused({ method: 'POST', path: '/v1/payment-links', headers: json, body: link({ description: 'x\udfffy' }) }, 400, 'invalid_field');
    await refused({ method: 'POST', path: '/v1/invoices', headers: json, body: JSON.stringify({ amount: '1', network: 'BSC', metadata: { a: ['\u0000'] } }) }, 400, 'invalid_field');
    // fast-check counterexample (with the fix reverted: 500): POST /v1/keys {"kind":"publishable","name":"a\u0000b"}.
    await refused({ method: 'POST', path: '/v1/keys', headers: json, body: '{"kind":"publishable","name":"a\\u0000b"}' }, 400, 'invalid_field');
    // Forms: fast-check counterexample POST /dashboard/keys "kind=publishable&name=a%00b" (500 page before the fix).
    for (const [path, form] of [['/dashboard/keys', 'kind=publishable&name=a%00b'], ['/dashboard/links', 'usdtAmount=1&enabledRails=USDT_BSC&merchantRef=a%00b']] as const) {
      const before = await settle(fp);
      const res = await send(h.stack.baseUrl, {
        method: 'POST', path, localAddress: nextClientIp(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: dashboard.cookie, origin: h.stack.baseUrl },
        body: `csrf=${encodeURIComponent(dashboard.csrf)}&${form}`,
      });
      counts.fuzzedInputs++;
      expect({ path, status: res.status, page: String(res.headers['content-type']).startsWith('text/html') }).toEqual({ path, status: 400, page: true });
      expect(res.text).toContain('must not contain NUL characters');
      expect(TableFingerprint.changed(before, await fp.take())).toEqual([]);
    }
  });

  it('a path segment longer than any id is the documented 404 (was 414 FST_ERR_MAX_PARAM_LENGTH)', async () => {
    await refused({ method: 'PUT', path: `/v1/merchant/clients/${'x'.repeat(300)}/wallets/tron`, headers: { 'content-type': 'application/json' }, body: '{}' }, 404, 'not_found');
  });

  it('headers over 16 KB and broken HTTP framing get the documented error body (was Node’s default body)', async () => {
    // Counterexample: GET /v1/keys with a 20 KB query string.
    await refused({ method: 'GET', path: `/v1/keys?${'x'.repeat(20_000)}=1` }, 431, 'headers_too_large');
    await refused({ method: 'POST', path: '/v1/payment-links', headers: { 'content-type': 'application/json', 'x-filler': 'y'.repeat(17_000) }, body: '{}' }, 431, 'headers_too_large');
    const raw = await rawExchange(h.stack.baseUrl, 'POST /v1/payment-links HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}');
    expect(raw.status).toBe(400);
    expect(errorBodyProblem(raw)).toBeNull();
    expect(raw.json).toMatchObject({ error: { code: 'malformed_request', type: 'invalid_request_error' } });
  });
});

/** Bytes written straight to the socket (what no HTTP client library will send), and the answer parsed. */
async function rawExchange(baseUrl: string, text: string): Promise<RawResponse> {
  const { port } = new URL(baseUrl);
  const socket = connect(Number(port), '127.0.0.1');
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('connect', () => socket.write(text));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', resolve);
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  counts.fuzzedInputs++;
  const reply = Buffer.concat(chunks).toString('utf8');
  const [head = '', body = ''] = reply.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text: body, json };
}

describe('every route, fuzzed', () => {
  it('enumerates the routes from the app itself', () => {
    const routes = appRoutes(h.stack.app).map(routeName);
    // Every operation of the API is served, and so are the dashboard, checkout and callback routes.
    for (const r of allRoutes) expect(routes).toContain(`${r.method} ${r.url}`);
    expect(routes).toEqual(expect.arrayContaining([
      'POST /dashboard/login', 'POST /dashboard/signup', 'POST /dashboard/switch', 'POST /dashboard/links', 'GET /dashboard/account', 'GET /dashboard/team',
      'POST /dashboard/invitations/:token', 'GET /p/:id', 'POST /v1/callbacks/mpesa/:token',
    ]));
  });

  it('finds a route for the action of every form the dashboard shows, and the forms of the new pages', () => {
    const posts = appRoutes(h.stack.app).filter((r) => r.method === 'POST').map((r) => new RegExp(`^${r.url.replace(/:[A-Za-z]+/g, '[^/]+')}$`));
    const actions = [...postForms];
    expect(actions.filter((a) => !posts.some((p) => p.test(a)))).toEqual([]);
    const fieldsOf = (action: string) => [...(formFields.get(action) ?? [])].sort();
    expect(fieldsOf('/dashboard/login')).toEqual(['email', 'password']);
    expect(fieldsOf('/dashboard/signup')).toEqual(['email', 'password', 'storeName']);
    expect(fieldsOf('/dashboard/switch')).toEqual(expect.arrayContaining(['csrf', 'environment', 'return']));
    expect(fieldsOf('/dashboard/account/password')).toEqual(expect.arrayContaining(['csrf', 'currentPassword', 'newPassword']));
    expect(fieldsOf('/dashboard/team/invitations')).toEqual(expect.arrayContaining(['csrf', 'email', 'role']));
    expect(fieldsOf(`/dashboard/invitations/${real.invitationToken}`)).toEqual(expect.arrayContaining(['password']));
    expect(actions).toEqual(expect.arrayContaining([`/dashboard/team/${real.userId}/role`, `/dashboard/team/${real.userId}/remove`, '/dashboard/account/sign-out-everywhere', '/dashboard/logout']));
  });

  it('answers every hostile input with a 4xx and the documented error body (or a genuine 2xx), never a 5xx, and a 4xx changes nothing', async () => {
    const routes = appRoutes(h.stack.app);
    for (const route of routes) {
      const result = await fc.check(
        fc.asyncProperty(caseFor(route), async (c) => {
          const problem = await exercise(route, c);
          if (problem) throw new Error(problem);
        }),
        // Shrinking replays inputs against the live stack: bounded in time, the smallest found by then is kept.
        { numRuns: runsPerRoute, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31), interruptAfterTimeLimit: sized(20_000, 90_000), markInterruptAsFailure: false },
      );
      if (result.failed) {
        const error = String((result.errorInstance as Error | undefined)?.message ?? result.errorInstance);
        counterexamples.push({ route: routeName(route), counterexample: result.counterexample, error });
        problems.push(`${routeName(route)}: ${error} (seed ${result.seed}, path ${result.counterexamplePath})`);
      }
    }
    expect(problems).toEqual([]);
  });
});

