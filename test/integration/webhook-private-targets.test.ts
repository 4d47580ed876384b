import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { postWebhook } from '../../services/webhooks/http-post.js';
import { recordDelivery } from '../../db/webhook-repo.js';
import { newId } from '../../domain/ids.js';
import type { Stack } from '../helpers/stack.js';
import { eventually, startWebhookStack, stopWebhookStack, webhookHarness } from '../helpers/webhook-harness.js';
import type { TestDnsServer } from '../helpers/webhook-dns.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Test-mode webhooks on a development setup: the operator allows loopback targets
 * (WEBHOOK_TEST_ALLOWED_NETWORKS=loopback), so a merchant's local receiver gets deliveries, but
 * nothing a private address answers is ever stored or shown, and every attempt checks again
 * where the host points.
 */
let stack: Stack;
let receiver: WebhookReceiver;
let dns: TestDnsServer;
beforeAll(async () => {
  ({ stack, receiver, dns } = await startWebhookStack());
});
afterAll(() => stopWebhookStack({ stack, receiver, dns }));

const { endpoint, emit, deliveries, finished } = webhookHarness(() => ({ stack, receiver }));
const create = (key: string, url: string) => stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url } });
const storedBodies = (endpointId: string) => stack.pool.anyFirst(sql.type(z.object({ b: z.string().nullable() }))`
  SELECT response_body AS b FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`);

describe('with loopback allowed', () => {
  it('delivers to a loopback receiver but never stores or shows what it answered', async () => {
    const store = await stack.createStore();
    const secretPage = 'ami-id instance-id iam/security-credentials/admin';
    receiver.on('/private', (_req, nth) =>
      nth === 1 ? { status: 500, body: secretPage }
        : nth === 2 ? { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/iam' } }
          : { status: 200, body: secretPage });
    const ep = await endpoint(store, '/private');
    const { event } = await emit(store);
    expect(await finished(event.id, ep.id)).toMatchObject({ outcome: 'delivered', attempts: 3 });
    for (const r of receiver.requestsTo('/private')) expect(verifyWebhook(ep.secret, r)).toBeTruthy();
    const log = await deliveries(store, ep.id);
    expect(log.map((d) => [d.attempt, d.status, d.responseStatus, d.responseBody])).toEqual([
      [3, 'succeeded', 200, null], [2, 'failed', 302, null], [1, 'failed', 500, null],
    ]);
    expect(log.every((d) => typeof d.latencyMs === 'number')).toBe(true);
    expect(log[1]!.error).toBe('HTTP 302 redirect not followed; set the endpoint URL to the final address');
    const text = (await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}/deliveries`, key: store.keys.test.secretKey })).text;
    expect(text).not.toContain('security-credentials');
    expect(text).not.toContain('169.254.169.254');
    expect(await storedBodies(ep.id)).toEqual([null, null, null]);
  });

  it('accepts loopback URLs, and still refuses link-local, private and unspecified addresses', async () => {
    const store = await stack.createStore();
    const key = store.keys.test.secretKey;
    for (const url of [receiver.url('/ok'), `http://localhost:${receiver.port}/ok`, `http://[::1]:${receiver.port}/ok`]) {
      expect({ url, status: (await create(key, url)).status }).toEqual({ url, status: 201 });
    }
    dns.records.set('metadata.example.test', '169.254.169.254');
    for (const url of [
      'http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://[fe80::1]/', 'http://10.0.0.1/',
      'http://[fd00::1]/', 'http://0.0.0.0:3000/', 'http://[::]:3000/', 'http://metadata.example.test/',
    ]) {
      const res = await create(key, url);
      expect({ url, status: res.status, param: res.body.error?.param }).toEqual({ url, status: 400, param: 'url' });
    }
  });

  it('checks the host again at every attempt and connects only to the address it checked', async () => {
    const store = await stack.createStore();
    dns.records.set('dev.example.test', '127.0.0.1');
    const res = await create(store.keys.test.secretKey, `http://dev.example.test:${receiver.port}/rebind`);
    expect(res.status).toBe(201);
    const { event } = await emit(store);
    const [first] = await eventually(() => deliveries(store, res.body.id), (d) => d.length === 1, 'the first delivery');
    expect(first).toMatchObject({ status: 'succeeded', responseStatus: 200, responseBody: null });
    expect(receiver.requestsTo('/rebind')).toHaveLength(1);

    const connections = receiver.connections;
    for (const answer of ['10.0.0.7', '169.254.169.254', ['127.0.0.1', '192.168.0.10'], ['::ffff:169.254.169.254']] as const) {
      dns.records.set('dev.example.test', answer);
      const retry = await stack.request({
        method: 'POST', url: `/v1/webhook-endpoints/${res.body.id}/deliveries/${first!.id}/retry`, key: store.keys.test.secretKey,
      });
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ eventId: event.id, status: 'failed', responseStatus: null, responseBody: null });
      expect(retry.body.error).toMatch(/^not sent: the URL host 'dev\.example\.test' resolves to /);
    }
    expect(receiver.connections).toBe(connections);
    expect(receiver.requestsTo('/rebind')).toHaveLength(1);
  });
});

describe('postWebhook', () => {
  it('reads the answer of a private address without keeping it, and keeps the first 1,024 characters otherwise', async () => {
    receiver.on('/body', () => ({ status: 500, body: `boom ${'x'.repeat(5000)}`, headers: { location: '/elsewhere' } }));
    const req = { url: new URL(receiver.url('/body')), headers: {}, body: '{}', pinned: [{ address: '127.0.0.1', family: 4 as const }] };
    const hidden = await postWebhook({ ...req, revealResponse: false });
    expect(hidden).toMatchObject({ status: 500, body: null, location: null, error: null });
    const shown = await postWebhook({ ...req, revealResponse: true });
    expect(shown).toMatchObject({ status: 500, location: '/elsewhere' });
    expect(shown.body).toMatch(/^boom x+$/);
    expect(shown.body).toHaveLength(1024);
  });
});

describe('upgrading', () => {
  it('migration 0017 clears the response bodies that test deliveries kept before, and leaves live ones', async () => {
    const store = await stack.createStore();
    const test = await endpoint(store, '/old');
    const live = (await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.live.secretKey, payload: { url: 'https://93.184.216.34/h' } })).body;
    const logged: Record<string, string> = {};
    for (const [env, ep] of [['test', test.id], ['live', live.id]] as const) {
      const { event } = await emit(store, { env, dispatch: false });
      // What an attempt from before this release left in the log.
      const row = await recordDelivery(stack.pool, {
        id: newId('webhookDelivery'), endpointId: ep, eventId: event.id, trigger: 'automatic', status: 'failed', responseStatus: 500,
        latencyMs: 3, responseBody: `${env}: ami-id instance-id`, error: 'HTTP 500', startedAt: new Date().toISOString(),
      });
      logged[env] = row.id;
    }
    const text = await readFile(new URL('../../db/migrations/0017_webhook_private_response_bodies.sql', import.meta.url), 'utf8');
    const client = new pg.Client({ connectionString: stack.config.databaseUrl! });
    await client.connect();
    await client.query(text).finally(() => client.end());
    expect(await storedBodies(test.id)).toEqual([null]);
    expect(await storedBodies(live.id)).toEqual(['live: ami-id instance-id']);
    const shown = await deliveries(store, test.id);
    expect(shown).toEqual([expect.objectContaining({ id: logged.test, responseStatus: 500, responseBody: null })]);
  });
});
