import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { reencryptSealedResponses } from '../../api/plugins/idempotency-reencrypt.js';
import { unsealBody } from '../../api/plugins/idempotency-seal.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { credentialKeyId, generateKey, keyringOf } from '../../domain/crypto/credentials.js';
import { loadConfig } from '../../config/config.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { encryptionEnv } from '../helpers/webhook-harness.js';

const keyA = generateKey('idem-a');
const keyB = generateKey('idem-b');

let stack: Stack;
let store: CreatedStore;
beforeAll(async () => {
  stack = await startStack(encryptionEnv(keyA));
  store = await stack.createStore('Idempotent hooks');
});
afterAll(async () => {
  await stack?.stop();
});

const post = (url: string, idempotencyKey: string, payload?: unknown) =>
  stack.request({ method: 'POST', url, key: store.keys.test.secretKey, payload, headers: { 'idempotency-key': idempotencyKey } });

const record = (key: string) =>
  stack.pool.one(sql.type(z.object({ text: z.string(), body: z.any() }))`
    SELECT response_body::text AS text, response_body AS body FROM idempotency_keys WHERE store_id = ${store.clientId} AND key = ${key}`);

const allRecords = () => stack.pool.oneFirst(sql.type(z.object({ t: z.string().nullable() }))`
  SELECT string_agg(row_to_json(k)::text, ' ') AS t FROM idempotency_keys k`);

describe('Idempotency-Key on routes that answer with a secret', () => {
  it('replays a create with the same response, secret included, while the record holds the secret only encrypted', async () => {
    const first = await post('/v1/webhook-endpoints', 'create-1', { url: 'https://example.com/idem' });
    expect(first.status).toBe(201);
    const again = await post('/v1/webhook-endpoints', 'create-1', { url: 'https://example.com/idem' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    const list = await stack.request({ method: 'GET', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey });
    expect(list.body.data.filter((e: { url: string }) => e.url === 'https://example.com/idem')).toHaveLength(1);

    const stored = await record('create-1');
    expect(stored.text).not.toContain(first.body.secret);
    expect(stored.text).not.toContain(first.body.secret.slice('whsec_'.length));
    const { secret: _shown, ...withoutSecret } = first.body;
    expect(stored.body).toEqual({ ...withoutSecret, $sealed: { secret: expect.stringMatching(/^v1:idem-a:/) } });
    expect(await allRecords()).not.toContain('whsec_');
  });

  it('replays a roll-secret with the same new secret, and rolls once', async () => {
    const ep = (await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey, payload: { url: 'https://example.com/roll' } })).body;
    const endpointRow = () => stack.pool.one(sql.type(z.object({ secret: z.string(), previous_secret: z.string().nullable() }))`
      SELECT secret, previous_secret FROM webhook_endpoints WHERE id = ${ep.id}`);
    const first = await post(`/v1/webhook-endpoints/${ep.id}/roll-secret`, 'roll-1');
    expect(first.status).toBe(200);
    const afterFirst = await endpointRow();
    const again = await post(`/v1/webhook-endpoints/${ep.id}/roll-secret`, 'roll-1');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await endpointRow()).toEqual(afterFirst);
    expect((await record('roll-1')).text).not.toContain(first.body.secret);
    expect(await allRecords()).not.toContain('whsec_');
  });

  it('stores an error answer as it is (it has no secret) and replays it', async () => {
    const unknown = `/v1/webhook-endpoints/we_${'0'.repeat(24)}/roll-secret`;
    const first = await post(unknown, 'roll-unknown');
    expect(first.status).toBe(404);
    const again = await post(unknown, 'roll-unknown');
    expect([again.status, again.headers['idempotent-replayed'], again.body.error.code]).toEqual([404, 'true', first.body.error.code]);
    expect((await record('roll-unknown')).body).not.toHaveProperty('$sealed');
  });

  it('keeps no record of a 400: the request was refused before anything ran', async () => {
    const first = await post('/v1/webhook-endpoints', 'create-bad', { url: 'ftp://example.com/h' });
    expect(first.status).toBe(400);
    const fixed = await post('/v1/webhook-endpoints', 'create-bad', { url: 'https://example.com/fixed' });
    expect([fixed.status, fixed.headers['idempotent-replayed']]).toEqual([201, undefined]);
  });

  it('credentials:reencrypt moves the sealed secrets to the new key and forgets expired records', async () => {
    const first = await post('/v1/webhook-endpoints', 'create-rotate', { url: 'https://example.com/rotate' });
    const old = await post('/v1/webhook-endpoints', 'create-old', { url: 'https://example.com/old' });
    expect(old.status).toBe(201);
    await stack.pool.query(sql.unsafe`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'create-old'`);
    const sealed = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM idempotency_keys WHERE response_body -> '$sealed' IS NOT NULL`);
    const rotating = loadConfig({ ...encryptionEnv(keyB, keyA), DATABASE_URL: stack.config.databaseUrl!, TEMPORAL_ADDRESS: stack.config.temporal.address! });
    expect(await reencryptSealedResponses(stack.pool, rotating)).toEqual({ reencrypted: sealed - 1, alreadyCurrent: 0, expiredDeleted: 1, failed: [] });
    const stored = await record('create-rotate');
    expect(credentialKeyId(stored.body.$sealed.secret)).toBe('idem-b');
    const ref = { storeId: store.clientId, environment: 'test', key: 'create-rotate' };
    expect(unsealBody(keyringOf([keyB]), ref, stored.body)).toEqual(first.body);
    expect(await reencryptSealedResponses(stack.pool, rotating)).toMatchObject({ reencrypted: 0, alreadyCurrent: sealed - 1 });
  });

  it('answers a replay whose sealed secret was tampered with or moved with a 500, never with a wrong secret', async () => {
    const a = await post('/v1/webhook-endpoints', 'create-a', { url: 'https://example.com/a' });
    const b = await post('/v1/webhook-endpoints', 'create-b', { url: 'https://example.com/b' });
    expect([a.status, b.status]).toEqual([201, 201]);
    // Moved: b's record now holds a's response (its sealed value is bound to key create-a).
    await stack.pool.query(sql.unsafe`UPDATE idempotency_keys SET response_body = (SELECT response_body FROM idempotency_keys WHERE key = 'create-a')
      WHERE key = 'create-b'`);
    const moved = await post('/v1/webhook-endpoints', 'create-b', { url: 'https://example.com/b' });
    expect(moved.status).toBe(500);
    expect(moved.body.error.type).toBe('api_error');
    expect(moved.text).not.toContain('whsec_');
    // Tampered: one character of a's sealed value changed.
    const parts = ((await record('create-a')).body.$sealed.secret as string).split(':');
    const ct = Buffer.from(parts[3]!, 'base64');
    ct[0] = ct[0]! ^ 0x01;
    const flipped = [...parts.slice(0, 3), ct.toString('base64'), parts[4]].join(':');
    await stack.pool.query(sql.unsafe`UPDATE idempotency_keys SET response_body = jsonb_set(response_body, '{$sealed,secret}', to_jsonb(${flipped}::text))
      WHERE key = 'create-a'`);
    const tampered = await post('/v1/webhook-endpoints', 'create-a', { url: 'https://example.com/a' });
    expect(tampered.status).toBe(500);
    expect(tampered.text).not.toContain('whsec_');
  });
});

describe('migration 0010', () => {
  it('removes the secret that records written before it hold in clear; their replay answers without it', async () => {
    const first = await post('/v1/webhook-endpoints', 'create-legacy', { url: 'https://example.com/legacy' });
    // As the table held it before: the whole response, secret in clear.
    await stack.pool.query(sql.unsafe`UPDATE idempotency_keys SET response_body = ${sql.jsonb(first.body)} WHERE key = 'create-legacy'`);
    expect(await allRecords()).toContain(first.body.secret);
    const text = await readFile(new URL('../../db/migrations/0010_webhook_secrets_encrypted.sql', import.meta.url), 'utf8');
    const statement = text.split(';').map((s) => s.split('\n').filter((l) => !l.startsWith('--')).join('\n').trim()).find((s) => s.startsWith('UPDATE idempotency_keys'));
    const client = new pg.Client({ connectionString: stack.config.databaseUrl! });
    await client.connect();
    await client.query(statement!).finally(() => client.end());
    expect(await allRecords()).not.toContain('whsec_');
    const { secret, ...rest } = first.body;
    const replay = await post('/v1/webhook-endpoints', 'create-legacy', { url: 'https://example.com/legacy' });
    expect([replay.status, replay.body]).toEqual([201, rest]);
  });
});
