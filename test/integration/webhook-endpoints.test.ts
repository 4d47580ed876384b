import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { RateService } from '../../services/rates/rate-service.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { insertEvent } from '../../db/event-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { httpCall } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { attemptWithLog, encryptionEnv, linkData } from '../helpers/webhook-harness.js';
import { TestDnsServer } from '../helpers/webhook-dns.js';

let stack: Stack;
let dns: TestDnsServer;
let store: CreatedStore;
beforeAll(async () => {
  dns = await TestDnsServer.start();
  // No WEBHOOK_TEST_ALLOWED_NETWORKS: the default of a deployment with its own PostgreSQL and Temporal.
  stack = await startStack({ WEBHOOK_DNS_SERVERS: dns.server, ...encryptionEnv() });
  store = await stack.createStore('Hooks');
  dns.records.set('example.com', '93.184.216.34');
});
afterAll(async () => {
  await stack?.stop();
  await dns?.close();
});

const create = (key: string, payload: unknown) => stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload });

describe('POST /v1/webhook-endpoints', () => {
  it('creates an endpoint for every event type and shows the whsec_ secret once', async () => {
    const res = await create(store.keys.test.secretKey, { url: 'http://example.com/hooks' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^we_[0-9a-z]{24}$/),
      url: 'http://example.com/hooks',
      enabledEvents: ['payment_link.confirmed', 'transfer.confirmed', 'invoice.paid', 'reconciliation.mismatch', 'webhook_endpoint.disabled', 'webhook_delivery.exhausted', 'mobile_money.unallocated', 'sweep.completed', 'sweep.failed'],
      environment: 'test',
      status: 'enabled',
      disabledReason: null,
      disabledAt: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
      createdAt: expect.any(String),
    });
    const list = await stack.request({ method: 'GET', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey });
    expect(list.status).toBe(200);
    const { secret, ...withoutSecret } = res.body;
    expect(list.body.data).toContainEqual(withoutSecret);
    expect(list.text).not.toContain(secret);
    const one = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${res.body.id}`, key: store.keys.test.secretKey });
    expect(one.body).toEqual(withoutSecret);
    expect(one.text).not.toContain('whsec_');
  });

  it('subscribes to the event types asked for', async () => {
    const res = await create(store.keys.test.secretKey, { url: 'https://example.com/h', enabledEvents: ['transfer.confirmed'] });
    expect(res.status).toBe(201);
    expect(res.body.enabledEvents).toEqual(['transfer.confirmed']);
  });

  it.each([
    [{}, 'missing_field', 'url'],
    [{ url: 'https://example.com/h', environment: 'live' }, 'unknown_field', 'environment'],
    [{ url: 'not a url' }, 'invalid_field', 'url'],
    [{ url: 'ftp://example.com/h' }, 'invalid_field', 'url'],
    [{ url: 'https://u:p@example.com/h' }, 'invalid_field', 'url'],
    [{ url: 'https://example.com/h', enabledEvents: ['payment_link.paid'] }, 'invalid_field', 'enabledEvents.0'],
    [{ url: 'https://example.com/h', enabledEvents: [] }, 'invalid_field', 'enabledEvents'],
    [{ url: 'https://example.com/h', enabledEvents: ['transfer.confirmed', 'transfer.confirmed'] }, 'invalid_field', 'enabledEvents'],
  ])('refuses %j with a 400 naming the field', async (payload, code, param) => {
    const before = await stack.request({ method: 'GET', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey });
    const res = await create(store.keys.test.secretKey, payload);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    const after = await stack.request({ method: 'GET', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey });
    expect(after.body.data).toHaveLength(before.body.data.length);
  });
});

describe('live endpoints (SSRF)', () => {
  it.each([
    ['http://hooks.example.com/h', 'https://'],
    ['https://localhost/h', 'internal name'],
    ['https://127.0.0.1/h', 'loopback'],
    ['https://[::1]/h', 'loopback'],
    ['https://[::ffff:127.0.0.1]/h', 'loopback'],
    ['https://[::ffff:0:a9fe:a9fe]/h', '169.254.169.254'],
    ['https://[2002:a9fe:a9fe::1]/h', '169.254.169.254'],
    ['https://0x7f000001/h', 'loopback'],
    ['https://10.0.0.5/h', 'private'],
    ['https://192.168.1.20/h', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'link-local'],
    ['https://metadata.google.internal/computeMetadata/v1', 'internal name'],
    ['https://rebind.example.test/h', 'resolves to 10.1.2.3'],
    ['https://meta.example.test/h', 'resolves to 169.254.169.254'],
    ['https://nowhere.example.test/h', 'does not resolve'],
  ])('refuses %s', async (url, message) => {
    dns.records.set('rebind.example.test', '10.1.2.3');
    dns.records.set('meta.example.test', '169.254.169.254');
    const res = await create(store.keys.live.secretKey, { url });
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('url');
    expect(res.body.error.message).toContain(message);
  });

  it('accepts https to a host that resolves to public addresses', async () => {
    dns.records.set('hooks.example.test', '93.184.216.34');
    const live = await create(store.keys.live.secretKey, { url: 'https://hooks.example.test/malipo' });
    expect(live.status).toBe(201);
    expect(live.body.environment).toBe('live');
    expect((await create(store.keys.live.secretKey, { url: 'https://93.184.216.34/h' })).status).toBe(201);
  });
});

describe('test endpoints (SSRF), without WEBHOOK_TEST_ALLOWED_NETWORKS', () => {
  it.each([
    ['http://127.0.0.1:3000/h', '127.0.0.1'],
    ['http://localhost:3000/h', '127.0.0.1'],
    ['http://app.localhost:3000/h', '127.0.0.1'],
    ['http://[::1]:3000/h', '::1'],
    ['http://2130706433/h', '127.0.0.1'],
    ['http://0177.0.0.1/h', '127.0.0.1'],
    ['http://0x7f.1/h', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/h', '127.0.0.1'],
    ['http://0.0.0.0:3000/h', '0.0.0.0'],
    ['http://0/h', '0.0.0.0'],
    ['http://[::]/h', '::'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://2852039166/latest/meta-data/', '169.254.169.254'],
    ['http://0251.0376.0251.0376/latest/meta-data/', '169.254.169.254'],
    ['http://[::ffff:169.254.169.254]/latest/meta-data/', '169.254.169.254'],
    ['http://[::ffff:0:a9fe:a9fe]/latest/meta-data/', '169.254.169.254'],
    ['http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', '169.254.169.254'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254'],
    ['http://[fe80::1]/h', 'fe80::1'],
    ['http://10.0.0.5/h', '10.0.0.5'],
    ['http://172.17.0.2:8080/h', '172.17.0.2'],
    ['http://192.168.1.20/h', '192.168.1.20'],
    ['http://100.100.100.200/latest/meta-data/', '100.100.100.200'],
    ['http://meta.example.test/latest/meta-data/', 'resolves to 169.254.169.254'],
    ['http://rebind.example.test/h', 'resolves to 10.1.2.3'],
    ['http://mixed.example.test/h', 'resolves to 10.9.9.9'],
    ['http://v6.example.test/h', 'resolves to fd12::7'],
    ['http://mapped.example.test/h', '169.254.169.254'],
  ])('refuses %s with a 400 naming url', async (url, message) => {
    dns.records.set('meta.example.test', '169.254.169.254');
    dns.records.set('rebind.example.test', '10.1.2.3');
    dns.records.set('mixed.example.test', ['93.184.216.34', '10.9.9.9']);
    dns.records.set('v6.example.test', ['93.184.216.34', 'fd12::7']);
    dns.records.set('mapped.example.test', ['::ffff:169.254.169.254']);
    const res = await create(store.keys.test.secretKey, { url });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_field', param: 'url' });
    expect(res.body.error.message).toContain(message);
  });

  it('accepts public hosts and hosts that do not resolve yet, and checks again at delivery: private by then means not sent', async () => {
    dns.records.set('later.example.test', '93.184.216.34');
    for (const url of ['http://93.184.216.34/h', 'https://[2606:4700::6810:84e5]/h', 'http://not-yet.example.test/h']) {
      expect({ url, status: (await create(store.keys.test.secretKey, { url })).status }).toEqual({ url, status: 201 });
    }
    const ep = await create(store.keys.test.secretKey, { url: 'http://later.example.test/h' });
    expect(ep.status).toBe(201);
    dns.records.set('later.example.test', '10.0.0.7');
    const event = await insertEvent(stack.pool, {
      storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: 'later', data: linkData('later'), createdAt: new Date().toISOString(),
    });
    const { result, deliveryId } = await attemptWithLog(stack, stack.config, event.id, ep.body.id);
    expect(result).toMatchObject({ outcome: 'failed', responseStatus: null });
    const log = await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${ep.body.id}/deliveries`, key: store.keys.test.secretKey });
    expect(log.body.data).toEqual([expect.objectContaining({ id: deliveryId, status: 'failed', responseStatus: null, responseBody: null })]);
    expect(log.body.data[0].error).toContain("not sent: the URL host 'later.example.test' resolves to 10.0.0.7");
  });
});

describe('endpoint management', () => {
  it('keeps stores and environments apart: 404 for another store, the other environment and malformed ids', async () => {
    const other = await stack.createStore('Other');
    const mine = (await create(store.keys.test.secretKey, { url: 'https://example.com/mine' })).body;
    for (const key of [other.keys.test.secretKey, store.keys.live.secretKey]) {
      for (const [method, url] of [
        ['GET', `/v1/webhook-endpoints/${mine.id}`],
        ['DELETE', `/v1/webhook-endpoints/${mine.id}`],
        ['POST', `/v1/webhook-endpoints/${mine.id}/roll-secret`],
        ['POST', `/v1/webhook-endpoints/${mine.id}/enable`],
        ['GET', `/v1/webhook-endpoints/${mine.id}/deliveries`],
        ['POST', `/v1/webhook-endpoints/${mine.id}/deliveries/wd_${'0'.repeat(24)}/retry`],
      ] as const) {
        const res = await stack.request({ method, url, key });
        expect({ method, url, status: res.status, type: res.body.error?.type }).toEqual({ method, url, status: 404, type: 'not_found_error' });
      }
      const list = await stack.request({ method: 'GET', url: '/v1/webhook-endpoints', key });
      expect(list.body.data.map((e: { id: string }) => e.id)).not.toContain(mine.id);
    }
    const malformed = await stack.request({ method: 'GET', url: '/v1/webhook-endpoints/nope', key: store.keys.test.secretKey });
    expect(malformed.status).toBe(404);
    expect((await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${mine.id}`, key: store.keys.test.secretKey })).status).toBe(200);
  });

  it('deletes an endpoint', async () => {
    const ep = (await create(store.keys.test.secretKey, { url: 'https://example.com/gone' })).body;
    const del = await stack.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${ep.id}`, key: store.keys.test.secretKey });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: ep.id, deleted: true });
    expect((await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}`, key: store.keys.test.secretKey })).status).toBe(404);
    expect((await stack.request({ method: 'DELETE', url: `/v1/webhook-endpoints/${ep.id}`, key: store.keys.test.secretKey })).status).toBe(404);
  });

  it('rolls the secret: a new whsec_ once, the old one valid for another 24 hours', async () => {
    const ep = (await create(store.keys.test.secretKey, { url: 'https://example.com/roll' })).body;
    const res = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/roll-secret`, key: store.keys.test.secretKey });
    expect(res.status).toBe(200);
    expect(res.body.secret).toMatch(/^whsec_/);
    expect(res.body.secret).not.toBe(ep.secret);
    const hours = (Date.parse(res.body.previousSecretExpiresAt) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
    const list = await stack.request({ method: 'GET', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey });
    expect(list.text).not.toContain(res.body.secret);
    expect(list.text).not.toContain(ep.secret);
  });

  it('requires a secret key on every route', async () => {
    const id = `we_${'0'.repeat(24)}`;
    for (const route of [
      { method: 'POST', url: '/v1/webhook-endpoints', payload: { url: 'https://example.com/h' } },
      { method: 'GET', url: '/v1/webhook-endpoints' },
      { method: 'GET', url: `/v1/webhook-endpoints/${id}` },
      { method: 'DELETE', url: `/v1/webhook-endpoints/${id}` },
      { method: 'POST', url: `/v1/webhook-endpoints/${id}/enable` },
      { method: 'POST', url: `/v1/webhook-endpoints/${id}/roll-secret` },
      { method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries` },
      { method: 'POST', url: `/v1/webhook-endpoints/${id}/deliveries/wd_${'0'.repeat(24)}/retry` },
    ] as const) {
      await expectSecretKeyRequired(stack, route);
    }
  });

  it('never writes a secret to the log', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logger = pino({ level: 'trace' }, sink);
    const rates = new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] });
    const app = await buildApp({ config: stack.config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates, logger });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const headers = { 'x-api-key': store.keys.test.secretKey };
    const created = await httpCall(base, { method: 'POST', url: '/v1/webhook-endpoints', headers, payload: { url: 'https://example.com/logged' } });
    const rolled = await httpCall(base, { method: 'POST', url: `/v1/webhook-endpoints/${created.body.id}/roll-secret`, headers });
    await httpCall(base, { method: 'GET', url: '/v1/webhook-endpoints', headers });
    await app.close();
    expect(lines.length).toBeGreaterThan(3);
    const log = lines.join('');
    for (const secret of [created.body.secret, rolled.body.secret, store.keys.test.secretKey]) expect(log).not.toContain(secret);
    expect(log).not.toContain('whsec_');
  });
});
