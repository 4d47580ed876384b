import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { AppError } from '../../domain/errors.js';
import { usableSweepDestination } from '../../services/treasury/destinations.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * The sweep destination allowlist (docs/treasury.md): owners add and remove destinations in the
 * dashboard; developers, viewers and API keys cannot; a new destination is usable only after the
 * configured delay (3 s here, 24 h by default); bad input changes nothing.
 */
const delaySeconds = 3;
let stack: Stack;
let store: CreatedStore;
let key: string;
let owner: { cookie: string; csrf: string };
let developer: { cookie: string; csrf: string };
let viewer: { cookie: string; csrf: string };

const destination = '0x52908400098527886E0F7030069857D2E4169EE7'; // EIP-55's example, checksummed
const rowCount = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM sweep_destinations`);
const listed = async () => (await stack.request({ method: 'GET', url: '/v1/treasury/destinations', key })).body.data as Array<Record<string, unknown>>;

function post(session: { cookie: string; csrf: string }, url: string, form: Record<string, string> = {}): Promise<HttpResponse> {
  return httpCall(stack.baseUrl, {
    method: 'POST', url, payload: new URLSearchParams({ csrf: session.csrf, ...form }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl, cookie: session.cookie },
  });
}

beforeAll(async () => {
  stack = await startStack({ TREASURY_DESTINATION_DELAY_SECONDS: String(delaySeconds) });
  store = await stack.createStore('Allowlist shop');
  key = store.keys.test.secretKey;
  owner = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'owner'));
  developer = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'developer'));
  viewer = await signInHttp(stack.baseUrl, await dashboardUser(stack, store, 'viewer'));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('sweep destinations', () => {
  let id: string;

  it('are refused to developers and viewers, and the form is not shown to them', async () => {
    for (const session of [developer, viewer]) {
      const res = await post(session, '/dashboard/treasury/destinations', { rail: 'USDT_BSC', address: destination, label: 'x' });
      expect(res.status).toBe(403);
      const page = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/treasury', headers: { cookie: session.cookie } });
      expect(page.status).toBe(200);
      expect(page.text).not.toContain('data-testid="add-destination"');
      expect(page.text).toContain('Only owners add or remove destinations');
    }
    expect(await rowCount()).toBe(0);
  });

  it('cannot be added with an API key: no route takes one', async () => {
    for (const method of ['POST', 'PUT'] as const) {
      const res = await stack.request({ method, url: '/v1/treasury/destinations', key, payload: { rail: 'USDT_BSC', address: destination } });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect(await rowCount()).toBe(0);
  });

  it('refuses a bad rail or address with the field named, and writes nothing', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ rail: 'USDT_BSC', address: 'hello' }, 'address'],
      [{ rail: 'USDT_BSC', address: '0x52908400098527886E0F7030069857D2E4169Ee7' }, 'address'], // a broken checksum
      [{ rail: 'USDT_BSC', address: '0x0000000000000000000000000000000000000000' }, 'address'],
      [{ rail: 'USDT_SOL', address: destination }, 'rail'],
      [{ rail: 'MOBILE_MONEY', address: destination }, 'rail'],
      [{ rail: 'USDT_BSC', address: destination, label: 'x'.repeat(101) }, 'label'],
    ];
    for (const [form, field] of cases) {
      const res = await post(owner, '/dashboard/treasury/destinations', form);
      expect({ form, status: res.status }).toEqual({ form, status: 400 });
      expect(res.text).toContain(`data-error-for="${field}"`);
    }
    expect(await rowCount()).toBe(0);
  });

  it('are added by an owner, usable only after the delay', async () => {
    const res = await post(owner, '/dashboard/treasury/destinations', { rail: 'USDT_BSC', address: destination, label: 'Cold wallet' });
    expect(res.status).toBe(303);
    const list = await listed();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ rail: 'USDT_BSC', address: destination.toLowerCase(), label: 'Cold wallet', usable: false });
    id = list[0]!.id as string;
    expect(id).toMatch(/^sdst_/);
    expect(Date.parse(list[0]!.usableAt as string) - Date.parse(list[0]!.createdAt as string)).toBe(delaySeconds * 1000);
    // A sweep cannot use it yet.
    const early = await usableSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, 'USDT_BSC', destination).catch((e: unknown) => e);
    expect(early).toBeInstanceOf(AppError);
    expect((early as AppError).code).toBe('invalid_state');
    const page = await httpCall(stack.baseUrl, { method: 'GET', url: '/dashboard/treasury', headers: { cookie: owner.cookie } });
    expect(page.text).toContain(`data-destination="${id}"`);
    expect(page.text).toMatch(/usable from/);
    // The same address twice is refused.
    const again = await post(owner, '/dashboard/treasury/destinations', { rail: 'USDT_BSC', address: destination.toLowerCase() });
    expect(again.status).toBe(400);
    expect(await rowCount()).toBe(1);

    await new Promise((r) => setTimeout(r, delaySeconds * 1000 + 300));
    expect((await listed())[0]).toMatchObject({ id, usable: true });
    const usable = await usableSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, 'USDT_BSC', destination);
    expect(usable.id).toBe(id);
    // Another rail, or an address not on the list, is still refused.
    await expect(usableSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, 'USDT_ETH', destination)).rejects.toMatchObject({ code: 'invalid_field', param: 'destination' });
    await expect(usableSweepDestination(stack, { storeId: store.clientId, environment: 'live' }, 'USDT_BSC', destination)).rejects.toMatchObject({ code: 'invalid_field' });
  }, 30_000);

  it('are removed by an owner only', async () => {
    expect((await post(developer, `/dashboard/treasury/destinations/${id}/remove`)).status).toBe(403);
    expect(await listed()).toHaveLength(1);
    const other = await stack.createStore('Another shop');
    const stranger = await signInHttp(stack.baseUrl, await dashboardUser(stack, other, 'owner'));
    expect((await post(stranger, `/dashboard/treasury/destinations/${id}/remove`)).status).toBe(404);
    expect(await listed()).toHaveLength(1);
    expect((await post(owner, `/dashboard/treasury/destinations/${id}/remove`)).status).toBe(303);
    expect(await listed()).toEqual([]);
    await expect(usableSweepDestination(stack, { storeId: store.clientId, environment: 'test' }, 'USDT_BSC', destination)).rejects.toMatchObject({ code: 'invalid_field' });
  });

  it('are listed with a secret key only', async () => {
    await expectSecretKeyRequired(stack, { method: 'GET', url: '/v1/treasury/destinations' });
  });
});
