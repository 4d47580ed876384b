import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { RateService } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { openPool } from '../../db/pool.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { rememberedOwnerOfKey } from '../../services/keys/key-owners.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { dashboardUser, signInHttp } from '../helpers/dashboard-users.js';
import { connectAllRails } from '../helpers/fixtures.js';
import { httpCall, type HttpResponse } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/** Key management (list, create, roll with a grace period, revoke) on the real app and PostgreSQL. */
let stack: Stack;
let store: CreatedStore;
beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Keys Shop');
});
afterAll(async () => {
  await stack?.stop();
});

const keys = (key: string) => stack.request({ method: 'GET', url: '/v1/keys', key });
const create = (key: string, payload: unknown = {}, headers?: Record<string, string>) =>
  stack.request({ method: 'POST', url: '/v1/keys', key, payload, headers });
const roll = (key: string, id: string, payload?: unknown) => stack.request({ method: 'POST', url: `/v1/keys/${id}/roll`, key, payload });
const revoke = (key: string, id: string, payload?: unknown) => stack.request({ method: 'POST', url: `/v1/keys/${id}/revoke`, key, payload });

/** The id of a store's key of one kind in one environment, read through the API itself. */
async function idOf(s: CreatedStore, env: 'test' | 'live', kind: 'secret' | 'publishable'): Promise<string> {
  const res = await keys(s.keys[env].secretKey);
  expect(res.status).toBe(200);
  const found = res.body.data.find((k: any) => k.kind === kind && k.status === 'active');
  return found.id;
}

/** A cheap authenticated call that proves whether a secret key works. */
const works = async (key: string) => (await keys(key)).status;
const pkWorks = async (s: CreatedStore, pk: string) =>
  (await stack.request({ method: 'GET', url: `/v1/chains/client/${s.clientId}?pk=${pk}` })).status;

function expectError(res: HttpResponse, status: number, code: string, param?: string): void {
  expect({ status: res.status, code: res.body?.error?.code, param: res.body?.error?.param }).toEqual({ status, code, param });
  expect(typeof res.body.error.message).toBe('string');
  expect(typeof res.body.error.requestId).toBe('string');
}

describe('GET /v1/keys', () => {
  it("lists the key's store's keys in its environment by prefix and last four, never a secret or a hash", async () => {
    const s = await stack.createStore('List Shop');
    const res = await keys(s.keys.test.secretKey);
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    const secret = res.body.data.find((k: any) => k.kind === 'secret');
    const publishable = res.body.data.find((k: any) => k.kind === 'publishable');
    expect(secret).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{24}$/),
      kind: 'secret',
      environment: 'test',
      name: null,
      prefix: 'sk_test_',
      last4: s.keys.test.secretKey.slice(-4),
      publishableKey: null,
      status: 'active',
      createdAt: expect.any(String),
      lastUsedAt: expect.any(String),
      expiresAt: null,
      revokedAt: null,
      replacedBy: null,
    });
    // Publishable keys are public by design: the checkout needs the whole value.
    expect(publishable).toMatchObject({ kind: 'publishable', prefix: 'pk_test_', last4: s.keys.test.publishableKey.slice(-4), publishableKey: s.keys.test.publishableKey });
    expect(res.text).not.toContain(s.keys.test.secretKey);
    expect(res.text).not.toContain(s.keys.live.secretKey);
    expect(res.text).not.toContain(s.keys.live.publishableKey);
    expect(res.text).not.toMatch(/hash/i);
  });

  it('records the last use of a key at most once a minute', async () => {
    const s = await stack.createStore('Last use');
    const id = await idOf(s, 'test', 'secret');
    const lastUsed = async () => (await keys(s.keys.test.secretKey)).body.data.find((k: any) => k.id === id).lastUsedAt as string;
    const first = await lastUsed();
    expect(Date.now() - Date.parse(first)).toBeLessThan(60_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(await lastUsed()).toBe(first);
    // As if the last use were two minutes old: once this process checks the key again (its memory
    // of the key lasts API_KEY_CACHE_SECONDS), the request writes the use again.
    await stack.pool.query(sql.unsafe`UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = ${id}`);
    const second = await eventually(async () => {
      const at = await lastUsed();
      return Date.parse(at) > Date.parse(first) ? at : undefined;
    }, 'the use to be recorded again', 20_000);
    expect(Date.now() - Date.parse(second)).toBeLessThan(20_000);
  });
});

describe('POST /v1/keys', () => {
  it('creates a secret key shown once; it works at once and is stored only as a hash', async () => {
    const s = await stack.createStore('Create Shop');
    const res = await create(s.keys.test.secretKey, { name: 'CI server' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'secret', environment: 'test', name: 'CI server', status: 'active', prefix: 'sk_test_', key: expect.stringMatching(/^sk_test_[0-9a-z]{40}$/) });
    expect(res.body.last4).toBe(res.body.key.slice(-4));
    expect(await works(res.body.key)).toBe(200);
    const list = await keys(res.body.key);
    expect(list.body.data.map((k: any) => k.id)).toContain(res.body.id);
    expect(list.text).not.toContain(res.body.key);
    const row = await stack.pool.one(sql.type(z.object({ row: z.string() }))`SELECT row_to_json(k)::text AS row FROM api_keys k WHERE id = ${res.body.id}`);
    expect(row.row).not.toContain(res.body.key);
    // A live key's environment is its own: the new test key is not in the live list.
    expect((await keys(s.keys.live.secretKey)).body.data.map((k: any) => k.id)).not.toContain(res.body.id);
  });

  it('creates a publishable key that the checkout endpoints accept', async () => {
    const s = await stack.createStore('Publishable Shop');
    const res = await create(s.keys.test.secretKey, { kind: 'publishable' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'publishable', key: expect.stringMatching(/^pk_test_/), publishableKey: res.body.key });
    expect(await pkWorks(s, res.body.key)).toBe(200);
  });

  it('replays an Idempotency-Key with the same key, and never stores it in clear', async () => {
    const s = await stack.createStore('Idempotent keys');
    const headers = { 'idempotency-key': 'new-key-1' };
    const first = await create(s.keys.test.secretKey, { name: 'once' }, headers);
    const again = await create(s.keys.test.secretKey, { name: 'once' }, headers);
    expect(first.status).toBe(201);
    expect([again.status, again.headers['idempotent-replayed'], again.body.key, again.body.id]).toEqual([201, 'true', first.body.key, first.body.id]);
    const stored = await stack.pool.any(sql.type(z.object({ row: z.string() }))`SELECT row_to_json(i)::text AS row FROM idempotency_keys i WHERE store_id = ${s.clientId}`);
    expect(stored.length).toBe(1);
    expect(stored[0]!.row).not.toContain(first.body.key);
  });

  it('names the field on a 400 and changes nothing', async () => {
    const s = await stack.createStore('Bad create');
    const cases: [unknown, string, string][] = [
      [{ kind: 'restricted' }, 'invalid_field', 'kind'],
      [{ name: '' }, 'invalid_field', 'name'],
      [{ name: 'x'.repeat(101) }, 'invalid_field', 'name'],
      [{ environment: 'live' }, 'unknown_field', 'environment'],
    ];
    for (const [payload, code, param] of cases) expectError(await create(s.keys.test.secretKey, payload), 400, code, param);
    expect((await keys(s.keys.test.secretKey)).body.data).toHaveLength(2);
  });

  it('accepts a POST without a body', async () => {
    const s = await stack.createStore('No body');
    const res = await stack.request({ method: 'POST', url: '/v1/keys', key: s.keys.test.secretKey });
    expect([res.status, res.body.kind]).toEqual([201, 'secret']);
  });
});

describe('POST /v1/keys/:id/roll', () => {
  it('issues a new key; the old one keeps working through the grace period, then is refused', async () => {
    const s = await stack.createStore('Roll Shop');
    const oldKey = s.keys.test.secretKey;
    const oldId = await idOf(s, 'test', 'secret');
    // 0.001 h = 3.6 s: long enough to see the old key work, short enough to see it stop.
    const res = await roll(oldKey, oldId, { graceHours: 0.001 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'secret', status: 'active', key: expect.stringMatching(/^sk_test_/), previousKey: { id: oldId, status: 'expiring', replacedBy: res.body.id } });
    const expiresAt = Date.parse(res.body.previousKey.expiresAt);
    expect(expiresAt - Date.now()).toBeGreaterThan(1_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(3_600 + 1_000);
    expect(await works(res.body.key)).toBe(200);
    const during = await keys(oldKey);
    if (Date.now() < expiresAt - 200) expect(during.status).toBe(200);
    const refused = await eventually(async () => {
      const r = await keys(oldKey);
      return r.status === 401 ? r : undefined;
    }, 'the old key to stop working', 15_000);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - 50);
    expectError(refused, 401, 'api_key_expired');
    expect(refused.body.error.type).toBe('authentication_error');
    expect(refused.body.error.message).toContain(res.body.id);
    expect(refused.text).not.toContain(oldKey);
    expect(await works(res.body.key)).toBe(200);
    const listed = (await keys(res.body.key)).body.data.find((k: any) => k.id === oldId);
    expect(listed).toMatchObject({ status: 'expired', replacedBy: res.body.id });
  });

  it('defaults to a 24-hour grace period, keeps the name, and refuses to roll a key twice', async () => {
    const s = await stack.createStore('Default grace');
    const named = await create(s.keys.test.secretKey, { name: 'web' });
    const res = await stack.request({ method: 'POST', url: `/v1/keys/${named.body.id}/roll`, key: s.keys.test.secretKey });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('web');
    const hours = (Date.parse(res.body.previousKey.expiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    expect(await works(named.body.key)).toBe(200);
    const twice = await roll(s.keys.test.secretKey, named.body.id);
    expectError(twice, 409, 'invalid_state');
    expect(twice.body.error.message).toContain(res.body.id);
  });

  it('with a grace of 0 the old key stops at once', async () => {
    const s = await stack.createStore('No grace');
    const res = await roll(s.keys.test.secretKey, await idOf(s, 'test', 'secret'), { graceHours: 0 });
    expect(res.status).toBe(200);
    expectError(await keys(s.keys.test.secretKey), 401, 'api_key_expired');
    expect(await works(res.body.key)).toBe(200);
  });

  it('rolls a publishable key: the old one serves the checkout until its grace ends', async () => {
    const s = await stack.createStore('Roll pk');
    const res = await roll(s.keys.test.secretKey, await idOf(s, 'test', 'publishable'), { graceHours: 0.0003 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'publishable', key: expect.stringMatching(/^pk_test_/) });
    expect(await pkWorks(s, res.body.key)).toBe(200);
    await eventually(async () => ((await pkWorks(s, s.keys.test.publishableKey)) === 401 ? true : undefined), 'the old publishable key to stop', 15_000);
  });

  it("puts the store's current publishable key in the invoice shape: the replacement, and never a revoked key", async () => {
    const s = await stack.createStore('Invoice pk');
    await connectAllRails(stack, s.clientId, 'test');
    const invoice = await stack.request({ method: 'POST', url: '/v1/invoices', key: s.keys.test.secretKey, payload: { amount: '1', network: 'BSC' } });
    expect([invoice.status, invoice.body.publishableKey]).toEqual([201, s.keys.test.publishableKey]);
    const shown = async () => (await stack.request({ method: 'GET', url: `/v1/invoices/${invoice.body.id}` })).body.publishableKey;
    const rolled = await roll(s.keys.test.secretKey, await idOf(s, 'test', 'publishable'), { graceHours: 1 });
    expect(await shown()).toBe(rolled.body.key);
    await revoke(s.keys.test.secretKey, rolled.body.id);
    expect(await shown()).toBe(s.keys.test.publishableKey);
  });

  it('names graceHours on a 400', async () => {
    const id = await idOf(store, 'test', 'secret');
    for (const graceHours of [-1, 169, '24', null]) {
      const res = await roll(store.keys.test.secretKey, id, { graceHours });
      expectError(res, 400, 'invalid_field', 'graceHours');
      expect(res.body.error.message).toMatch(/graceHours/);
    }
    expectError(await roll(store.keys.test.secretKey, id, { graceSeconds: 5 }), 400, 'unknown_field', 'graceSeconds');
    expect(await works(store.keys.test.secretKey)).toBe(200);
  });
});

describe('POST /v1/keys/:id/revoke', () => {
  let second: { app: FastifyInstance; pool: DatabasePool; baseUrl: string };
  beforeAll(async () => {
    // A second API instance with its own pool on the same database, as behind a load balancer.
    const pool = await openPool(stack.config.databaseUrl!, 2);
    const rates = new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] });
    const app = await buildApp({ config: stack.config, pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates });
    await app.listen({ host: '127.0.0.1', port: 0 });
    second = { app, pool, baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  });
  afterAll(async () => {
    await second?.app.close();
    await second?.pool.end();
  });
  const onSecond = (key: string) => httpCall(second.baseUrl, { method: 'GET', url: '/v1/keys', headers: { 'x-api-key': key } });
  /** The other instance's answer once it refuses: within API_KEY_CACHE_SECONDS (5 s) of the change. */
  const refusedOnSecond = (key: string) =>
    eventually(async () => {
      const res = await onSecond(key);
      return res.status === 401 ? res : undefined;
    }, 'the other instance to refuse the key', 15_000);

  it('refuses a revoked key at once on the instance that revoked it, and within seconds on every other', async () => {
    const s = await stack.createStore('Revoke Shop');
    const extra = await create(s.keys.test.secretKey, { name: 'leaked' });
    expect((await onSecond(extra.body.key)).status).toBe(200);
    const res = await revoke(s.keys.test.secretKey, extra.body.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: extra.body.id, status: 'revoked', revokedAt: expect.any(String) });
    expect(res.body.key).toBeUndefined();
    expectError(await keys(extra.body.key), 401, 'api_key_revoked');
    const refused = await refusedOnSecond(extra.body.key);
    expectError(refused, 401, 'api_key_revoked');
    expect(refused.body.error.type).toBe('authentication_error');
    expect(refused.text).not.toContain(extra.body.key);
    expectError(await keys(extra.body.key), 401, 'api_key_revoked');
    expect(await works(s.keys.test.secretKey)).toBe(200);
    expectError(await revoke(s.keys.test.secretKey, extra.body.id), 409, 'invalid_state');
    expectError(await roll(s.keys.test.secretKey, extra.body.id), 409, 'invalid_state');
  });

  it('ends the grace period of a rolled key now', async () => {
    const s = await stack.createStore('Revoke rolled');
    const oldId = await idOf(s, 'test', 'secret');
    const rolled = await roll(s.keys.test.secretKey, oldId, { graceHours: 24 });
    expect(await works(s.keys.test.secretKey)).toBe(200);
    expect((await revoke(rolled.body.key, oldId)).status).toBe(200);
    expectError(await refusedOnSecond(s.keys.test.secretKey), 401, 'api_key_revoked');
  });

  it('revokes the calling key only when asked explicitly', async () => {
    const s = await stack.createStore('Self revoke');
    const id = await idOf(s, 'test', 'secret');
    const refused = await revoke(s.keys.test.secretKey, id);
    expectError(refused, 400, 'confirmation_required', 'confirmSelfRevoke');
    expect(refused.body.error.message).toContain('confirmSelfRevoke');
    expect(await works(s.keys.test.secretKey)).toBe(200);
    expectError(await revoke(s.keys.test.secretKey, id, { confirmSelfRevoke: 'yes' }), 400, 'invalid_field', 'confirmSelfRevoke');
    const res = await revoke(s.keys.test.secretKey, id, { confirmSelfRevoke: true });
    expect([res.status, res.body.status]).toEqual([200, 'revoked']);
    expectError(await refusedOnSecond(s.keys.test.secretKey), 401, 'api_key_revoked');
  });

  it('revokes a publishable key: the checkout endpoints refuse it at once', async () => {
    const s = await stack.createStore('Revoke pk');
    expect(await pkWorks(s, s.keys.test.publishableKey)).toBe(200);
    expect((await revoke(s.keys.test.secretKey, await idOf(s, 'test', 'publishable'))).status).toBe(200);
    const res = await stack.request({ method: 'GET', url: `/v1/chains/client/${s.clientId}?pk=${s.keys.test.publishableKey}` });
    expectError(res, 401, 'api_key_revoked', 'pk');
  });

  it('leaves dashboard sessions alone: they belong to people, and no key opens one', async () => {
    const s = await stack.createStore('Revoke sessions');
    const extra = await create(s.keys.test.secretKey);
    const person = await dashboardUser(stack, s);
    const { cookie } = await signInHttp(stack.baseUrl, person);
    const page = () => httpCall(second.baseUrl, { method: 'GET', url: '/dashboard', headers: { cookie } });
    expect((await page()).status).toBe(200);
    expect((await revoke(s.keys.test.secretKey, extra.body.id)).status).toBe(200);
    expect((await revoke(s.keys.test.secretKey, await idOf(s, 'test', 'secret'), { confirmSelfRevoke: true })).status).toBe(200);
    expect((await page()).status).toBe(200);
    // A key, revoked or not, is no way into the dashboard.
    for (const key of [extra.body.key, s.keys.live.secretKey]) {
      const login = await httpCall(stack.baseUrl, {
        method: 'POST', url: '/dashboard/login', payload: new URLSearchParams({ secretKey: key }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: stack.baseUrl },
      });
      expect([login.status, login.headers['set-cookie']]).toEqual([400, undefined]);
    }
  });
});

describe('a revoke racing a check of the same key, on one instance', () => {
  /**
   * A pool whose next key check (the read behind an authentication) is answered by PostgreSQL at
   * once but handed back only when the test releases it: "read before the revoke committed,
   * finished after it" made deterministic.
   */
  function holdingKeyChecks(pool: DatabasePool) {
    let next: { reached: () => void; released: Promise<void> } | undefined;
    const held = new Proxy(pool, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== 'maybeOne') return typeof value === 'function' ? value.bind(target) : value;
        return async (...args: Parameters<DatabasePool['maybeOne']>) => {
          const answer = await target.maybeOne(...args);
          const hold = next;
          if (hold && args[0].sql.includes('FROM api_keys k JOIN stores s')) {
            next = undefined;
            hold.reached();
            await hold.released;
          }
          return answer;
        };
      },
    });
    const holdNextCheck = () => {
      let release!: () => void;
      let reached!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const readDone = new Promise<void>((r) => (reached = r));
      next = { reached, released };
      return { readDone, release };
    };
    return { pool: held, holdNextCheck };
  }

  it('does not remember a check that read the key before the revoke: the next request is refused', async () => {
    const pool = await openPool(stack.config.databaseUrl!, 2);
    const { pool: held, holdNextCheck } = holdingKeyChecks(pool);
    const rates = new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] });
    const app = await buildApp({ config: stack.config, pool: held, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates });
    try {
      const s = await stack.createStore('Revoke race');
      const extra = await create(s.keys.test.secretKey, { name: 'raced' });
      const call = (key: string, method: 'GET' | 'POST' = 'GET', url = '/v1/keys') => app.inject({ method, url, headers: { 'x-api-key': key } });
      const hold = holdNextCheck();
      const inFlight = call(extra.body.key);
      await hold.readDone;
      // The key read as active; now it is revoked through this instance, which forgets its keys.
      const revoked = await call(s.keys.test.secretKey, 'POST', `/v1/keys/${extra.body.id}/revoke`);
      expect([revoked.statusCode, revoked.json().status]).toEqual([200, 'revoked']);
      hold.release();
      // The request that read the key before the revoke committed may pass; its answer must not be kept.
      expect((await inFlight).statusCode).toBe(200);
      expect(rememberedOwnerOfKey(held, 'secret', extra.body.key)).toBeUndefined();
      const next = await call(extra.body.key);
      expect([next.statusCode, next.json().error.code]).toEqual([401, 'api_key_revoked']);
    } finally {
      await app.close();
      await pool.end();
    }
  });
});

describe('one store never sees or touches another store’s keys', () => {
  it('answers 404 for another store, another environment and a malformed id, and changes nothing', async () => {
    const a = await stack.createStore('Store A');
    const b = await stack.createStore('Store B');
    const bSecret = await idOf(b, 'test', 'secret');
    const aLive = await idOf(a, 'live', 'secret');
    for (const id of [bSecret, aLive, 'key_nope', 'pl_000000000000000000000000']) {
      expectError(await roll(a.keys.test.secretKey, id), 404, 'not_found');
      expectError(await revoke(a.keys.test.secretKey, id, { confirmSelfRevoke: true }), 404, 'not_found');
    }
    const listed = (await keys(a.keys.test.secretKey)).body.data.map((k: any) => k.id);
    expect(listed).not.toContain(bSecret);
    expect(listed).not.toContain(aLive);
    expect(await works(b.keys.test.secretKey)).toBe(200);
    expect(await works(a.keys.live.secretKey)).toBe(200);
  });
});

describe('messages point at the real mechanisms', () => {
  it('a secret key sent as pk is called exposed and the message says how to roll it', async () => {
    const res = await stack.request({ method: 'GET', url: `/v1/chains/client/${store.clientId}?pk=${store.keys.test.secretKey}` });
    expectError(res, 403, 'wrong_key_kind', 'pk');
    expect(res.body.error.message).toContain('POST /v1/keys/');
    expect(res.body.error.message).toContain('keys:roll');
    expect(res.text).not.toContain(store.keys.test.secretKey);
  });

  it('an unknown key is told apart from a revoked one', async () => {
    const res = await keys(`sk_test_${'0'.repeat(40)}`);
    expectError(res, 401, 'invalid_api_key');
    expect(res.body.error.message).not.toMatch(/revoked/);
  });
});

describe('authentication', () => {
  it.each([
    ['GET', '/v1/keys', undefined],
    ['POST', '/v1/keys', {}],
    ['POST', '/v1/keys/key_000000000000000000000000/roll', {}],
    ['POST', '/v1/keys/key_000000000000000000000000/revoke', {}],
  ] as const)('%s %s needs a secret key', async (method, url, payload) => {
    await expectSecretKeyRequired(stack, { method, url, payload });
  });
});
