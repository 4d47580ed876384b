import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { devKeyFileName } from '../../services/keyring.js';
import { RateService } from '../../services/rates/rate-service.js';
import { webhookSecretSlot } from '../../services/webhooks/secrets.js';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { CredentialCryptoError, credentialKeyId, decryptCredential, generateKey, keyringOf, parseKeyring } from '../../domain/crypto/credentials.js';
import { loadConfig } from '../../config/config.js';
import { httpCall } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { attemptWithLog, encryptionEnv, eventually, loopbackWebhooks, webhookHarness, suiteDispatches } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

// The whole Standard Webhooks schedule (about three days) shrunk to about five seconds.
const retryScale = '0.00002';
const keyA = generateKey('wh-a');

let stack: Stack;
let receiver: WebhookReceiver;
const dirs: string[] = [];
beforeAll(async () => {
  stack = await startStack({ WEBHOOK_RETRY_SCALE: retryScale, ...loopbackWebhooks, ...suiteDispatches, ...encryptionEnv(keyA) });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const { endpoint, emit, deliveries, getEndpoint, finished } = webhookHarness(() => ({ stack, receiver }));

const stored = (id: string) =>
  stack.pool.one(sql.type(z.object({ secret: z.string(), previous_secret: z.string().nullable(), store_id: z.string() }))`
    SELECT secret, previous_secret, store_id FROM webhook_endpoints WHERE id = ${id}`);

/** Flips one byte of the ciphertext part of `v1:<keyId>:<nonce>:<ciphertext>:<tag>`. */
function tampered(value: string): string {
  const parts = value.split(':');
  const ct = Buffer.from(parts[3]!, 'base64');
  ct[0] = ct[0]! ^ 0x01;
  parts[3] = ct.toString('base64');
  return parts.join(':');
}

describe('webhook secrets at rest', () => {
  it('stores each secret as an AES-256-GCM ciphertext bound to its endpoint, never in clear', async () => {
    const store = await stack.createStore();
    const [a, b] = [await endpoint(store, '/rest/a'), await endpoint(store, '/rest/b')];
    const [rowA, rowB] = [await stored(a.id), await stored(b.id)];
    for (const [row, ep] of [[rowA, a], [rowB, b]] as const) {
      expect(row.secret).toMatch(new RegExp(`^v1:${keyA.id}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$`));
      expect(row.secret).not.toContain('whsec_');
      expect(row.secret).not.toContain(ep.secret.slice('whsec_'.length));
    }
    expect(rowA.secret).not.toBe(rowB.secret);
    const table = await stack.pool.oneFirst(sql.type(z.object({ t: z.string() }))`SELECT string_agg(row_to_json(w)::text, ' ') AS t FROM webhook_endpoints w`);
    expect(table).not.toContain('whsec_');
    // The ciphertext opens in its own endpoint's slot only: copied to another endpoint, it fails.
    const keyring = keyringOf([keyA]);
    const slotOf = (endpointId: string) => webhookSecretSlot({ storeId: store.clientId, environment: 'test', endpointId });
    expect(decryptCredential(keyring, slotOf(a.id), rowA.secret)).toBe(a.secret);
    expect(() => decryptCredential(keyring, slotOf(b.id), rowA.secret)).toThrow(CredentialCryptoError);
  });

  it('rolls by moving the ciphertext as it is; both secrets sign during the overlap, then only the new one', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/rest/rolled');
    const before = await stored(ep.id);
    const rolled = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/roll-secret`, key: store.keys.test.secretKey });
    expect(rolled.status).toBe(200);
    const after = await stored(ep.id);
    expect(after.previous_secret).toBe(before.secret);
    expect(after.secret).toMatch(/^v1:/);
    expect(after.secret).not.toContain(rolled.body.secret.slice('whsec_'.length));

    await emit(store);
    await receiver.waitFor(() => receiver.requestsTo('/rest/rolled').length === 1, 'the first webhook');
    const first = receiver.requestsTo('/rest/rolled')[0]!;
    expect(String(first.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifyWebhook(rolled.body.secret, first)).toBeTruthy();
    expect(verifyWebhook(ep.secret, first)).toBeTruthy();

    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = ${ep.id}`);
    await emit(store);
    await receiver.waitFor(() => receiver.requestsTo('/rest/rolled').length === 2, 'the second webhook');
    const second = receiver.requestsTo('/rest/rolled')[1]!;
    expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifyWebhook(rolled.body.secret, second)).toBeTruthy();
    expect(() => verifyWebhook(ep.secret, second)).toThrow('No matching signature');
  });

  it('fails every attempt loudly when the stored ciphertext was tampered with: logged, nothing sent, no garbage signature', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/rest/tampered');
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET secret = ${tampered((await stored(ep.id)).secret)} WHERE id = ${ep.id}`);

    // What the worker logs: an error naming the endpoint and the reason, and no secret.
    const { event } = await emit(store, { dispatch: false });
    const direct = await attemptWithLog(stack, stack.config, event.id, ep.id);
    expect(direct.result).toMatchObject({ outcome: 'failed', responseStatus: null });
    const errors = direct.logs.filter((l) => l.level === 'ERROR');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toBe('webhook not sent: the signing secret is unusable');
    expect(errors[0]!.meta).toMatchObject({ endpointId: ep.id, eventId: event.id, error: expect.stringContaining('failed authentication') });
    expect(JSON.stringify(direct.logs)).not.toContain('whsec_');

    // Through the workers: every attempt is a failure in the delivery log, then the endpoint is disabled, saying why.
    const { event: second } = await emit(store);
    expect(await finished(second.id, ep.id)).toMatchObject({ outcome: 'exhausted', attempts: 10, endpointDisabled: true });
    const log = (await deliveries(store, ep.id)).filter((d) => d.eventId === second.id);
    expect(log).toHaveLength(10);
    for (const d of log) {
      expect(d).toMatchObject({ status: 'failed', responseStatus: null });
      expect(d.error).toMatch(/^not sent: the signing secret stored for this endpoint could not be decrypted/);
    }
    const shown = await eventually(() => getEndpoint(store, ep.id), (e) => e.status === 'disabled', 'the endpoint disabled');
    expect(shown.disabledReason).toContain('could not be decrypted');
    expect(receiver.requestsTo('/rest/tampered')).toEqual([]);
  }, 60_000);
});

describe('without ENCRYPTION_KEY', () => {
  /** The same database and Temporal, served by an API whose config has no ENCRYPTION_KEY. */
  async function keylessApi() {
    const dataDir = await mkdtemp(join(tmpdir(), 'malipo-wh-keyless-'));
    dirs.push(dataDir);
    const config = loadConfig({
      DATABASE_URL: stack.config.databaseUrl!, TEMPORAL_ADDRESS: stack.config.temporal.address!, TASK_QUEUE_PREFIX: stack.config.temporal.taskQueuePrefix,
      LOG_LEVEL: 'silent', CHAIN_WATCHERS: 'off', DATA_DIR: dataDir,
    });
    const rates = new RateService({ testKesPerUsdt: config.testKesPerUsdt, sources: [] });
    const app = await buildApp({ config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(), rates });
    await app.listen({ host: '127.0.0.1', port: 0 });
    return { app, config, dataDir, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  }

  it('refuses live endpoints (403 live_mode_forbidden, as for live M-Pesa credentials); test endpoints use the development key', async () => {
    const store = await stack.createStore();
    const keyless = await keylessApi();
    const countLive = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM webhook_endpoints WHERE store_id = ${store.clientId} AND environment = 'live'`);
    try {
      const live = { 'x-api-key': store.keys.live.secretKey };
      const refused = await httpCall(keyless.base, { method: 'POST', url: '/v1/webhook-endpoints', headers: live, payload: { url: 'https://93.184.216.34/h' } });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ type: 'permission_error', code: 'live_mode_forbidden' });
      expect(refused.body.error.message).toContain('ENCRYPTION_KEY');
      expect(await countLive()).toBe(0);

      // A live endpoint made where the key is configured cannot be rolled where it is not.
      const made = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.live.secretKey, payload: { url: 'https://93.184.216.34/h' } });
      expect(made.status).toBe(201);
      const before = await stored(made.body.id);
      const roll = await httpCall(keyless.base, { method: 'POST', url: `/v1/webhook-endpoints/${made.body.id}/roll-secret`, headers: live });
      expect(roll.status).toBe(403);
      expect(roll.body.error.code).toBe('live_mode_forbidden');
      expect(await stored(made.body.id)).toEqual(before);

      // A worker without the key logs a failed attempt for it instead of signing.
      const { event } = await emit(store, { env: 'live', dispatch: false });
      const direct = await attemptWithLog(stack, keyless.config, event.id, made.body.id);
      expect(direct.result.outcome).toBe('failed');
      expect((await deliveries(store, made.body.id, 'live'))[0]!.error).toContain('no ENCRYPTION_KEY configured');

      const test = await httpCall(keyless.base, { method: 'POST', url: '/v1/webhook-endpoints', headers: { 'x-api-key': store.keys.test.secretKey }, payload: { url: 'https://example.com/h' } });
      expect(test.status).toBe(201);
      const devKey = parseKeyring((await readFile(join(keyless.dataDir, devKeyFileName), 'utf8')).trim());
      expect(credentialKeyId((await stored(test.body.id)).secret)).toBe(devKey.current.id);
      expect(devKey.current.id).not.toBe(keyA.id);
      // Its outbox event must never reach the public address through the sweeper.
      await stack.pool.query(sql.unsafe`DELETE FROM webhook_endpoints WHERE id = ${made.body.id}`);
    } finally {
      await keyless.app.close();
    }
  });
});
