import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { listPendingInvitations } from '../../db/dashboard-user-repo.js';
import { inviteMember } from '../../services/dashboard/team.js';
import { addSweepDestination } from '../../services/treasury/destinations.js';
import { appRoutes, type AppRoute } from '../chaos/hostile/common.js';
import { dashboardUser, signInHttp, type DashboardUser } from '../helpers/dashboard-users.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Who may do what in the dashboard, over every route the app serves (read from Fastify's route
 * tree, so a new page is covered without editing this file):
 * - a viewer's every action is refused with 403, and nothing in the database changes;
 * - a developer's every action on where money goes, store settings or the team is refused alike;
 * - an owner of one store naming another store's link, endpoint, delivery, key, member or
 *   invitation gets 404, on pages and actions, and nothing changes.
 */
let stack: Stack;
let receiver: WebhookReceiver;

interface Shop {
  store: CreatedStore;
  owner: DashboardUser;
  ids: Record<string, string>;
}
let mine: Shop;
let theirs: Shop;
let sessions: Record<'owner' | 'developer' | 'viewer', { cookie: string }>;

/** Actions that need no store role: signing in, out, switching, one's own account, joining. */
const selfService = new Set([
  'POST /dashboard/login', 'POST /dashboard/signup', 'POST /dashboard/logout', 'POST /dashboard/switch',
  'POST /dashboard/account/password', 'POST /dashboard/account/sign-out-everywhere', 'POST /dashboard/invitations/:token',
]);
/**
 * Where money goes, the store's settings and its team: owners only. Assigning an unallocated
 * M-Pesa payment to a link is not one (the money has arrived; it says which link it paid): a
 * developer may, as through the API.
 */
const ownerOnly = /^\/dashboard\/(mobile-money(?!\/unallocated\/)|wallets|settings|team|treasury)(\/|$)/;

async function makeShop(name: string): Promise<Shop> {
  const store = await stack.createStore(name);
  await connectAllRails(stack, store.clientId);
  const key = store.keys.test.secretKey;
  const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '5', enabledRails: ['USDT_BSC'], merchantRef: `authz-${name}`, expiresInMinutes: 1440 } });
  expect(link.status).toBe(201);
  const endpoint = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url(`/${store.clientId}`) } });
  expect(endpoint.status).toBe(201);
  // A confirmed payment makes an event and a delivery the receiver accepts (so nothing retries later).
  const paid = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '6', enabledRails: ['USDT_BSC'], expiresInMinutes: 1440 } });
  expect((await stack.request({ method: 'POST', url: `/v1/payment-links/${paid.body.id}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } })).status).toBeLessThan(300);
  const deliveryId = await eventually(async () => {
    const res = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, key });
    return res.body?.data?.find((d: { status: string }) => d.status === 'succeeded')?.id as string | undefined;
  }, 'a delivered webhook', 60_000);
  const owner = await dashboardUser(stack, store, 'owner');
  await inviteMember(stack, store.clientId, owner.userId, { email: `invitee-${store.clientId}@example.test`, role: 'viewer' });
  const [invitation] = await listPendingInvitations(stack.pool, store.clientId);
  const destination = await addSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, owner.userId, { rail: 'USDT_BSC', address: '0x52908400098527886E0F7030069857D2E4169EE7', label: name });
  // A paybill payment that matched no link, as a confirmation would have left it.
  const unallocated = `AUTHZ${name.toUpperCase()}1`;
  await stack.pool.query(sql.unsafe`INSERT INTO mpesa_c2b_payments (store_id, environment, shortcode, trans_id, amount, state, fingerprint, body)
    VALUES (${store.clientId}, 'test', '174379', ${unallocated}, 10, 'unallocated', 'authz', '{}'::jsonb)`);
  const keys = await stack.request({ method: 'GET', url: '/v1/keys', key });
  const secretKeyId = keys.body.data.find((k: { kind: string; last4: string }) => k.kind === 'secret' && key.endsWith(k.last4)).id;
  return { store, owner, ids: { link: link.body.id, endpoint: endpoint.body.id, delivery: deliveryId, key: secretKeyId, user: owner.userId, invitation: invitation!.id, destination: destination.id, unallocated } };
}

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await startStack({ WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback' });
  mine = await makeShop('Mine');
  theirs = await makeShop('Theirs');
  let ip = 40;
  const signIn = async (u: DashboardUser) => signInHttp(stack.baseUrl, u, { localAddress: `127.0.0.${ip++}` });
  sessions = {
    owner: await signIn(mine.owner),
    developer: await signIn(await dashboardUser(stack, mine.store, 'developer')),
    viewer: await signIn(await dashboardUser(stack, mine.store, 'viewer')),
  };
  // Every link's workflow has started and the deliveries are done: from here the data stands still.
  await eventually(async () => ((await unstarted()) === 0 ? true : undefined), 'every workflow started', 30_000);
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
});

const unstarted = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM payment_links WHERE NOT workflow_started`);

/** A digest of everything a store owns (times of last use aside): any change shows. */
const ownedTables = [
  'stores', 'store_settings', 'store_members', 'store_invitations', 'dashboard_users', 'api_keys', 'payment_links', 'link_payments',
  'webhook_endpoints', 'webhook_deliveries', 'store_wallets', 'mobile_money_connections', 'events', 'store_logos', 'sweep_destinations',
  'mpesa_c2b_payments',
];
async function digest(): Promise<Record<string, string>> {
  const present = await stack.pool.anyFirst(sql.type(z.object({ t: z.string() }))`
    SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY(${sql.array(ownedTables, 'text')})`);
  const out: Record<string, string> = {};
  for (const table of present) {
    out[table] = await stack.pool.oneFirst(sql.type(z.object({ d: z.string() }))`
      SELECT count(*) || ':' || md5(coalesce(string_agg((to_jsonb(t) - 'last_used_at')::text, '|' ORDER BY (to_jsonb(t))::text), '')) AS d
      FROM ${sql.identifier([table])} t`);
  }
  return out;
}

/** The path with its parameters named after `shop`'s objects; null when a parameter names none (`:token`). */
function pathFor(route: AppRoute, shop: Shop): string | null {
  let missing = false;
  const path = route.url.replace(/:(\w+)/g, (_, name: string) => {
    const id =
      name === 'deliveryId' ? shop.ids.delivery
      : name === 'userId' ? shop.ids.user
      : name === 'slot' ? 'evm'
      : name === 'transId' ? shop.ids.unallocated
      : name === 'token' ? undefined
      : name === 'id' && route.url.startsWith('/dashboard/links/') ? shop.ids.link
      : name === 'id' && route.url.startsWith('/dashboard/webhooks/') ? shop.ids.endpoint
      : name === 'id' && route.url.startsWith('/dashboard/keys/') ? shop.ids.key
      : name === 'id' && route.url.startsWith('/dashboard/team/invitations/') ? shop.ids.invitation
      : name === 'id' && route.url.startsWith('/dashboard/treasury/destinations/') ? shop.ids.destination
      : undefined;
    if (id === undefined) {
      if (name !== 'token') throw new Error(`no object for :${name} in ${route.url}: teach pathFor which store object it names`);
      missing = true;
      return '';
    }
    return id;
  });
  return missing ? null : path;
}

/** Whether the route's parameters name one store's object (a slot or a token names none). */
const namesAnObject = (route: AppRoute) => /:(id|deliveryId|userId|transId)\b/.test(route.url);

/** Plausible fields, so a route that forgot its guard would act rather than fail validation. */
const plausibleForm: Record<string, string> = {
  graceHours: '1', role: 'viewer', rail: 'USDT_BSC', xpub: 'xpub', address: 'x', kind: 'publishable', name: 'n', url: 'https://example.com/hook',
  usdtAmount: '1', enabledRails: 'USDT_BSC', lateWatchMinutes: '10', underpaymentToleranceBps: '10', email: 'someone@example.test',
};

async function act(session: { cookie: string }, method: string, path: string): Promise<HttpResponse> {
  const csrf = /name="csrf" value="([^"]+)"/.exec((await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/account', headers: { cookie: session.cookie } })).text)?.[1] ?? '';
  return httpCall(stack.baseUrl, {
    method, url: path, payload: new URLSearchParams({ csrf, ...plausibleForm }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl, cookie: session.cookie },
  });
}

const dashboardRoutes = () => appRoutes(stack.app).filter((r) => r.url.startsWith('/dashboard'));
const actions = () => dashboardRoutes().filter((r) => r.method !== 'GET' && !selfService.has(`${r.method} ${r.url}`));

describe('dashboard authorization', () => {
  it('covers the dashboard: its actions are found in the route tree', () => {
    const names = actions().map((r) => `${r.method} ${r.url}`);
    expect(names).toEqual(expect.arrayContaining(['POST /dashboard/links', 'POST /dashboard/keys', 'POST /dashboard/wallets/:slot', 'POST /dashboard/team/invitations']));
  });

  it('a viewer can change nothing: every action is 403 and the data stands still', async () => {
    const before = await digest();
    const problems: string[] = [];
    for (const route of actions()) {
      const path = pathFor(route, mine);
      if (path === null) continue;
      const res = await act(sessions.viewer, route.method, path);
      if (res.status !== 403 || !res.text.includes('Your role in this store is Viewer')) problems.push(`${route.method} ${route.url}: ${res.status}`);
    }
    expect(problems).toEqual([]);
    expect(await digest()).toEqual(before);
  });

  it('a developer cannot touch where money goes, the settings or the team', async () => {
    const before = await digest();
    const problems: string[] = [];
    for (const route of actions().filter((r) => ownerOnly.test(r.url))) {
      const path = pathFor(route, mine);
      if (path === null) continue;
      const res = await act(sessions.developer, route.method, path);
      if (res.status !== 403) problems.push(`${route.method} ${route.url}: ${res.status}`);
    }
    expect(problems).toEqual([]);
    expect(await digest()).toEqual(before);
  });

  it("an owner naming another store's objects gets 404 on every page and action, and nothing changes", async () => {
    const before = await digest();
    const problems: string[] = [];
    for (const route of dashboardRoutes().filter((r) => namesAnObject(r) && !selfService.has(`${r.method} ${r.url}`))) {
      const path = pathFor(route, theirs);
      if (path === null) continue;
      const res = route.method === 'GET'
        ? await httpCall(stack.baseUrl, { method: 'GET', url: path, headers: { cookie: sessions.owner.cookie } })
        : await act(sessions.owner, route.method, path);
      if (res.status !== 404) problems.push(`${route.method} ${route.url}: ${res.status}`);
      for (const id of Object.values(theirs.ids)) if (res.text.includes(id) && !path.includes(id)) problems.push(`${route.method} ${route.url} shows ${id}`);
    }
    expect(problems).toEqual([]);
    expect(await digest()).toEqual(before);
  });

  it("another store's objects never appear on the owner's pages", async () => {
    const problems: string[] = [];
    for (const route of dashboardRoutes().filter((r) => r.method === 'GET' && !r.url.includes(':'))) {
      const res = await httpCall(stack.baseUrl, { method: 'GET', url: route.url, headers: { cookie: sessions.owner.cookie } });
      for (const id of Object.values(theirs.ids)) if (res.text.includes(id)) problems.push(`${route.url} shows ${id}`);
    }
    expect(problems).toEqual([]);
  });
});
