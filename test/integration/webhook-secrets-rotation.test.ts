import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { reencryptWebhookSecrets } from '../../services/webhooks/reencrypt-secrets.js';
import { encryptWebhookSecret, webhookSecretSlot } from '../../services/webhooks/secrets.js';
import { credentialKeyId, decryptCredential, generateKey, keyringOf } from '../../domain/crypto/credentials.js';
import { generateWebhookSecret } from '../../domain/webhooks/signing.js';
import { loadConfig } from '../../config/config.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { attemptWithLog, encryptionEnv, loopbackWebhooks, webhookHarness, suiteDispatches } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';

const keyA = generateKey('keyA');
const keyB = generateKey('keyB');

let stack: Stack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  stack = await startStack({ ...loopbackWebhooks, ...suiteDispatches, ...encryptionEnv(keyA) });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.down();
});

const { endpoint, emit } = webhookHarness(() => ({ stack, receiver }));

const rowSchema = z.object({ id: z.string(), store_id: z.string(), secret: z.string(), previous_secret: z.string().nullable(), previous_secret_expires_at: z.string().nullable() });
const stored = (id: string) => stack.pool.one(sql.type(rowSchema)`
  SELECT id, store_id, secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = ${id}`);
const open = (keys: Parameters<typeof keyringOf>[0], storeId: string, endpointId: string, value: string) =>
  decryptCredential(keyringOf(keys), webhookSecretSlot({ storeId, environment: 'test', endpointId }), value);

/** `npx malipo credentials:reencrypt` as an operator runs it, against the test database. */
async function reencryptCommand(encryptionKey: string): Promise<{ code: number | null; report: any }> {
  const proc = spawn(process.execPath, ['bin/malipo.mjs', 'credentials:reencrypt'], {
    env: { ...process.env, DATABASE_URL: stack.config.databaseUrl!, ENCRYPTION_KEY: encryptionKey, DATA_DIR: '/nonexistent-malipo-test-dir', LOG_LEVEL: 'silent', NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => proc.on('exit', resolve));
  return { code, report: JSON.parse(out.trim().split('\n').pop()!) };
}

describe('secrets written before encryption (legacy plaintext rows)', () => {
  it('still deliver, and credentials:reencrypt encrypts them, current and previous', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/legacy');
    const older = generateWebhookSecret();
    // A row as 0004 stored it: both secrets in clear, in the middle of a roll's overlap.
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET secret = ${ep.secret}, previous_secret = ${older},
      previous_secret_expires_at = now() + interval '1 hour' WHERE id = ${ep.id}`);
    await emit(store);
    await receiver.waitFor(() => receiver.requestsTo('/legacy').length === 1, 'the delivery from plaintext');
    for (const secret of [ep.secret, older]) expect(verifyWebhook(secret, receiver.requestsTo('/legacy')[0]!)).toBeTruthy();

    expect(await reencryptWebhookSecrets(stack.pool, stack.config)).toEqual({ encryptedPlaintext: 1, reencrypted: 0, alreadyCurrent: 0, failed: [] });
    const row = await stored(ep.id);
    expect(`${row.secret} ${row.previous_secret}`).not.toContain('whsec_');
    expect([credentialKeyId(row.secret), credentialKeyId(row.previous_secret!)]).toEqual(['keyA', 'keyA']);
    expect(open([keyA], store.clientId, ep.id, row.secret)).toBe(ep.secret);
    expect(open([keyA], store.clientId, ep.id, row.previous_secret!)).toBe(older);

    await emit(store);
    await receiver.waitFor(() => receiver.requestsTo('/legacy').length === 2, 'the delivery from ciphertext');
    for (const secret of [ep.secret, older]) expect(verifyWebhook(secret, receiver.requestsTo('/legacy')[1]!)).toBeTruthy();
    expect(await reencryptWebhookSecrets(stack.pool, stack.config)).toEqual({ encryptedPlaintext: 0, reencrypted: 0, alreadyCurrent: 1, failed: [] });
  });

  it('encrypts a legacy current secret on the way into previous_secret when rolled', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/legacy-roll');
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET secret = ${ep.secret} WHERE id = ${ep.id}`);
    const rolled = await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${ep.id}/roll-secret`, key: store.keys.test.secretKey });
    expect(rolled.status).toBe(200);
    const row = await stored(ep.id);
    expect(open([keyA], store.clientId, ep.id, row.previous_secret!)).toBe(ep.secret);
    expect(open([keyA], store.clientId, ep.id, row.secret)).toBe(rolled.body.secret);
  });
});

describe('key rotation with `npx malipo credentials:reencrypt`', () => {
  it('moves every secret to the new key and drops previous secrets past their overlap, so the old key can go', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/rotated');
    const expired = await endpoint(store, '/rotated-expired');
    await stack.request({ method: 'POST', url: `/v1/webhook-endpoints/${expired.id}/roll-secret`, key: store.keys.test.secretKey });
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 minute' WHERE id = ${expired.id}`);
    const plain = await endpoint(store, '/rotated-plain');
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET secret = ${plain.secret} WHERE id = ${plain.id}`);
    const total = await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_endpoints`);

    const { code, report } = await reencryptCommand(`keyB:${keyB.key.toString('base64')},keyA:${keyA.key.toString('base64')}`);
    expect(code).toBe(0);
    expect(report).toEqual({
      currentKeyId: 'keyB', reencrypted: 0, alreadyCurrent: 0, failed: [],
      webhookSecrets: { encryptedPlaintext: 1, reencrypted: total - 1, alreadyCurrent: 0, failed: [] },
      idempotencyRecords: { reencrypted: 0, alreadyCurrent: 0, expiredDeleted: 0, failed: [] },
    });
    const rows = await stack.pool.any(sql.type(rowSchema)`SELECT id, store_id, secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints`);
    for (const r of rows) {
      expect(credentialKeyId(r.secret)).toBe('keyB');
      if (r.previous_secret) expect(credentialKeyId(r.previous_secret)).toBe('keyB');
    }
    expect(await stored(expired.id)).toMatchObject({ previous_secret: null, previous_secret_expires_at: null });
    expect(open([keyB], store.clientId, plain.id, (await stored(plain.id)).secret)).toBe(plain.secret);

    // With only the new key, a worker still signs with the same secret.
    const onlyB = loadConfig({ ...loopbackWebhooks, ...encryptionEnv(keyB), DATABASE_URL: stack.config.databaseUrl!, TEMPORAL_ADDRESS: stack.config.temporal.address! });
    const { event } = await emit(store, { dispatch: false });
    expect((await attemptWithLog(stack, onlyB, event.id, ep.id)).result.outcome).toBe('succeeded');
    expect(verifyWebhook(ep.secret, receiver.requestsTo('/rotated')[0]!)).toBeTruthy();
  }, 60_000);

  it('names an endpoint whose secret cannot be read, leaves it as it is and exits non-zero', async () => {
    const store = await stack.createStore();
    const ep = await endpoint(store, '/unknown-key');
    const keyC = generateKey('keyC');
    const underC = encryptWebhookSecret(keyringOf([keyC]), { storeId: store.clientId, environment: 'test', endpointId: ep.id }, ep.secret);
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET secret = ${underC} WHERE id = ${ep.id}`);
    const { code, report } = await reencryptCommand(`keyB:${keyB.key.toString('base64')}`);
    expect(code).toBe(1);
    expect(report.webhookSecrets.failed).toEqual([
      { endpointId: ep.id, storeId: store.clientId, environment: 'test', error: expect.stringContaining("key id 'keyC'") },
    ]);
    expect(JSON.stringify(report)).not.toContain('whsec_');
    expect((await stored(ep.id)).secret).toBe(underC);
  }, 60_000);
});

describe('migration 0010', () => {
  it('drops previous secrets whose overlap is over (SQL cannot encrypt them, and nothing signs with them)', async () => {
    const store = await stack.createStore();
    const [over, live] = [await endpoint(store, '/m/over'), await endpoint(store, '/m/live')];
    await stack.pool.query(sql.unsafe`UPDATE webhook_endpoints SET previous_secret = ${generateWebhookSecret()},
      previous_secret_expires_at = CASE WHEN id = ${over.id} THEN now() - interval '1 hour' ELSE now() + interval '1 hour' END
      WHERE id IN (${over.id}, ${live.id})`);
    await runMigrationStatement('UPDATE webhook_endpoints');
    expect((await stored(over.id)).previous_secret).toBeNull();
    expect((await stored(live.id)).previous_secret).toMatch(/^whsec_/);
  });
});

/** One statement of the migration file, run again as it is written. */
async function runMigrationStatement(startsWith: string): Promise<void> {
  const text = await readFile(new URL('../../db/migrations/0010_webhook_secrets_encrypted.sql', import.meta.url), 'utf8');
  const statements = text.split(';').map((s) => s.split('\n').filter((l) => !l.startsWith('--')).join('\n').trim());
  const statement = statements.find((s) => s.startsWith(startsWith));
  if (!statement) throw new Error(`no '${startsWith}' statement in the migration`);
  const client = new pg.Client({ connectionString: stack.config.databaseUrl! });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
