import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import { connectMobileMoney } from '../../services/mpesa/connect.js';
import { keyringFor } from '../../services/keyring.js';
import { decryptConnection } from '../../rails/mpesa/merchant-session.js';
import { findConnection, findToken } from '../../db/mpesa-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { AppError } from '../../domain/errors.js';
import { loadConfig } from '../../config/config.js';
import { startDarajaEmulator, type DarajaEmulator, type EmulatorMerchant } from '../../emulators/daraja/server.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { startStack, type Stack } from '../helpers/stack.js';

const paybill: EmulatorMerchant = {
  consumerKey: 'ck-paybill-7f3a', consumerSecret: 'cs-paybill-91bd', shortCode: '174379',
  passkey: 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919', kind: 'paybill',
};
const till: EmulatorMerchant = {
  consumerKey: 'ck-till-55aa', consumerSecret: 'cs-till-66bb', shortCode: '600100', passkey: 'till-passkey-0c1d', kind: 'till', tills: ['600101'],
};
const liveApp: EmulatorMerchant = {
  consumerKey: 'ck-live-1234', consumerSecret: 'cs-live-5678', shortCode: '888880', passkey: 'live-passkey-9e8f', kind: 'paybill',
};

const paybillBody = (over: Record<string, unknown> = {}) => ({
  consumerKey: paybill.consumerKey, consumerSecret: paybill.consumerSecret, shortcode: paybill.shortCode, passkey: paybill.passkey, environment: 'sandbox', ...over,
});

let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;

beforeAll(async () => {
  daraja = await startDarajaEmulator({ merchants: [paybill, till, liveApp] });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, MPESA_LIVE_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey('it1')) });
  store = await stack.createStore('Duka');
});
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

// The endpoint allows 20 requests a minute per IP: each test speaks from its own address.
let ip = '127.0.1.0';
let testNumber = 0;
beforeEach(() => {
  ip = `127.0.1.${++testNumber}`;
});
const connect = (s: CreatedStore, payload: unknown, key = s.keys.test.secretKey) =>
  stack.request({ method: 'POST', url: `/v1/merchant/clients/${s.clientId}/mobile-money/connect`, key, payload, localAddress: ip });
const rawConnection = (storeId: string, env = 'test') =>
  stack.pool.maybeOne(sql.type(z.object({ shortcode: z.string(), shortcode_type: z.string(), store_number: z.string().nullable(), all_enc: z.string() }))`
    SELECT shortcode, shortcode_type, store_number, consumer_key_enc || ' ' || consumer_secret_enc || ' ' || passkey_enc AS all_enc
    FROM mobile_money_connections WHERE store_id = ${storeId} AND environment = ${env}`);
const operatorCalls = () => daraja.requests.filter((r) => !r.path.startsWith('/_emulator'));

describe('POST /v1/merchant/clients/:clientId/mobile-money/connect', () => {
  it('validates with Daraja without charging anyone, then stores the credentials encrypted', async () => {
    const before = operatorCalls().length;
    const res = await connect(store, paybillBody());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, shortcode: '174379', environment: 'sandbox', c2bRegistration: { registered: true, apiVersion: 'v2', error: null }, pullRegistration: null });
    // One token and one status query about a transaction that cannot exist: no prompt, no payment.
    // Then the C2B URLs are registered (paybill payments from the M-Pesa menu).
    expect(operatorCalls().slice(before).map((r) => `${r.path} ${r.status}`)).toEqual([
      '/oauth/v1/generate 200',
      '/mpesa/stkpushquery/v1/query 400',
      '/mpesa/c2b/v2/registerurl 200',
    ]);
    expect(daraja.state.prompts.size).toBe(0);

    const row = await rawConnection(store.clientId);
    expect(row).toMatchObject({ shortcode: '174379', shortcode_type: 'paybill', store_number: null });
    for (const plain of [paybill.consumerKey, paybill.consumerSecret, paybill.passkey]) expect(row!.all_enc).not.toContain(plain);
    expect(row!.all_enc).toMatch(/^v1:it1:\S+ v1:it1:\S+ v1:it1:\S+$/);
    const stored = (await findConnection(stack.pool, store.clientId, 'test'))!;
    expect(decryptConnection(await keyringFor(stack.config, 'test'), stored)).toEqual({
      consumerKey: paybill.consumerKey, consumerSecret: paybill.consumerSecret, passkey: paybill.passkey,
    });
    // The token the check minted is kept (encrypted) for the first prompt.
    expect((await findToken(stack.pool, store.clientId, 'test'))?.tokenEnc).toMatch(/^v1:it1:/);
    const chains = await stack.request({ method: 'GET', url: `/v1/chains/client/${store.clientId}?pk=${store.keys.test.publishableKey}` });
    expect(chains.body.availableChains.map((c: { network: string }) => c.network)).toContain('MOBILE_MONEY');
  });

  it('answers 422 with the operator reason and saves nothing when Daraja refuses', async () => {
    const s = await stack.createStore('Refused');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ consumerSecret: 'wrong-secret' }, /consumer key and secret were refused: Invalid Authentication passed/],
      [{ passkey: 'not-the-passkey' }, /shortcode and passkey were refused: Wrong credentials/],
      [{ shortcode: '999999' }, /Merchant does not exist/],
    ];
    for (const [over, reason] of cases) {
      const res = await connect(s, paybillBody(over));
      expect({ over, status: res.status, code: res.body.error.code }).toEqual({ over, status: 422, code: 'credentials_rejected' });
      expect(res.body.error.type).toBe('invalid_request_error');
      expect(res.body.error.message).toMatch(reason);
      expect(JSON.stringify(res.body)).not.toContain(paybill.passkey);
    }
    expect(await rawConnection(s.clientId)).toBeNull();
  });

  it('answers 502 and saves nothing when Daraja is busy or unreachable', async () => {
    const s = await stack.createStore('Unreachable');
    daraja.failNext(1, 'drop_connection');
    let res = await connect(s, paybillBody());
    expect([res.status, res.body.error.code, res.body.error.type]).toEqual([502, 'upstream_failed', 'upstream_error']);
    daraja.failNext(1, 'spike_arrest');
    res = await connect(s, paybillBody());
    expect(res.status).toBe(502);
    expect(res.body.error.message).toContain('Spike Arrest');
    // Nothing listening at all.
    const closed = await startDarajaEmulator({ merchants: [] });
    await closed.close();
    const config = loadConfig({ ...configEnv(), MPESA_SANDBOX_URL: closed.url });
    await expect(connectMobileMoney({ pool: stack.pool, config }, { storeId: s.clientId, environment: 'test' }, paybillBody() as never))
      .rejects.toMatchObject({ code: 'upstream_failed', status: 502 });
    expect(await rawConnection(s.clientId)).toBeNull();
  });

  it('requires the environment to match the key, and says why', async () => {
    let res = await connect(store, paybillBody({ environment: 'live' }));
    expect([res.status, res.body.error.code, res.body.error.param]).toEqual([400, 'invalid_field', 'environment']);
    expect(res.body.error.message).toContain("test key, so 'environment' must be 'sandbox'");
    res = await connect(store, paybillBody({ environment: 'sandbox' }), store.keys.live.secretKey);
    expect([res.status, res.body.error.param]).toEqual([400, 'environment']);
    expect(res.body.error.message).toContain("live key, so 'environment' must be 'live'");
  });

  it('connects live credentials with a live key (ENCRYPTION_KEY configured), and refuses them without one', async () => {
    const s = await stack.createStore('Live');
    const live = { consumerKey: liveApp.consumerKey, consumerSecret: liveApp.consumerSecret, shortcode: liveApp.shortCode, passkey: liveApp.passkey, environment: 'live' };
    const res = await connect(s, live, s.keys.live.secretKey);
    // Connected; the C2B URLs are refused before Daraja is asked (production wants https), and the answer says so.
    expect(res.body).toEqual({
      ok: true, shortcode: '888880', environment: 'live',
      c2bRegistration: { registered: false, apiVersion: null, error: { type: 'upstream_error', code: 'c2b_registration_failed', message: 'Daraja requires https C2B URLs in production; PUBLIC_BASE_URL is not https.', param: 'shortcode' } },
      pullRegistration: null,
    });
    expect(await rawConnection(s.clientId, 'test')).toBeNull();
    const noKey = loadConfig({ ...configEnv(), ENCRYPTION_KEY: '' });
    const other = await stack.createStore('Live without key');
    const err = await connectMobileMoney({ pool: stack.pool, config: noKey }, { storeId: other.clientId, environment: 'live' }, live as never).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect([err.status, err.code]).toEqual([403, 'live_mode_forbidden']);
    expect(err.message).toContain('ENCRYPTION_KEY');
  });

  it('connects a till through its store number, and a reconnect replaces the old credentials atomically', async () => {
    const s = await stack.createStore('Reconnect');
    expect((await connect(s, paybillBody())).status).toBe(200);
    const tillBody = { consumerKey: till.consumerKey, consumerSecret: till.consumerSecret, shortcode: '600101', passkey: till.passkey, environment: 'sandbox', shortcodeType: 'till', storeNumber: '600100' };
    // A failed reconnect leaves the working connection alone.
    const refused = await connect(s, { ...tillBody, passkey: 'wrong' });
    expect(refused.status).toBe(422);
    expect(await rawConnection(s.clientId)).toMatchObject({ shortcode: '174379', shortcode_type: 'paybill' });
    const tokenBefore = (await findToken(stack.pool, s.clientId, 'test'))!.tokenEnc;
    const res = await connect(s, tillBody);
    expect(res.body).toEqual({ ok: true, shortcode: '600101', environment: 'sandbox', c2bRegistration: { registered: true, apiVersion: 'v2', error: null }, pullRegistration: null });
    expect(await rawConnection(s.clientId)).toMatchObject({ shortcode: '600101', shortcode_type: 'till', store_number: '600100' });
    const creds = decryptConnection(await keyringFor(stack.config, 'test'), (await findConnection(stack.pool, s.clientId, 'test'))!);
    expect(creds.consumerKey).toBe(till.consumerKey);
    expect((await findToken(stack.pool, s.clientId, 'test'))!.tokenEnc).not.toBe(tokenBefore);
  });

  it('refuses bad bodies with the field named, and another store with a 404', async () => {
    const other = await stack.createStore('Other');
    const cases: [unknown, number, string, string | undefined][] = [
      [paybillBody({ shortcode: '12ab' }), 400, 'invalid_field', 'shortcode'],
      [paybillBody({ environment: 'production' }), 400, 'invalid_field', 'environment'],
      [paybillBody({ passkey: '   ' }), 400, 'invalid_field', 'passkey'],
      [paybillBody({ shortcodeType: 'till' }), 400, 'missing_field', 'storeNumber'],
      [paybillBody({ storeNumber: '600100' }), 400, 'invalid_field', 'storeNumber'],
      [paybillBody({ extra: 1 }), 400, 'unknown_field', 'extra'],
      [{ consumerKey: 'x' }, 400, 'missing_field', 'consumerSecret'],
    ];
    for (const [payload, status, code, param] of cases) {
      const res = await connect(store, payload);
      expect({ payload, status: res.status, code: res.body.error.code, param: res.body.error.param }).toEqual({ payload, status, code, param });
    }
    const res = await stack.request({ method: 'POST', url: `/v1/merchant/clients/${other.clientId}/mobile-money/connect`, key: store.keys.test.secretKey, payload: paybillBody() });
    expect([res.status, res.body.error.code]).toEqual([404, 'not_found']);
  });

  it('needs a secret key', async () => {
    await expectSecretKeyRequired(stack, { method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, payload: paybillBody() });
  });
});

/** The settings of the running stack, to build a variant config for a direct service call. */
function configEnv(): Record<string, string> {
  return {
    DATABASE_URL: stack.config.databaseUrl!,
    TEMPORAL_ADDRESS: stack.config.temporal.address!,
    MPESA_SANDBOX_URL: daraja.url,
    MPESA_LIVE_URL: daraja.url,
    ENCRYPTION_KEY: formatKeyEntry({ id: stack.config.encryptionKeys!.current.id, key: stack.config.encryptionKeys!.current.key }),
    DATA_DIR: '/nonexistent-malipo-test-dir',
  };
}
