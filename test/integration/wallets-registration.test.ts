import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import bs58 from 'bs58';
import { createHash } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { expectSecretKeyRequired } from '../helpers/auth-cases.js';
import { startStack, type Stack } from '../helpers/stack.js';

const evmXpub = 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt';
const tronXpub = 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd';
// research/chains.md §1, second mnemonic: another EVM account key and its address at /0/0.
const otherEvmXpub = 'xpub6CAbrutZYNHuKssmnkMs2XWmJchYgKo1TbGLCnBgFmN6jrycqZ65ARPasJay3YRHiPC86uKmkM8d5pxVdyAbChpxycQbfttYbGXgmBCbuQp';
const solanaWallet = 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk';
const solanaAta = '6pXYguUixhfdydHDMgsvSy3sAWjStL2eEYh4KeYJAUDk';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest();
function reversion(xpub: string, version: number, depth?: number): string {
  const payload = Buffer.from(bs58.decode(xpub).subarray(0, 78));
  payload.writeUInt32BE(version, 0);
  if (depth !== undefined) payload[4] = depth;
  return bs58.encode(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}

let stack: Stack;
let store: CreatedStore;
let other: CreatedStore;
beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Acme');
  other = await stack.createStore('Other');
});
afterAll(async () => stack?.stop());

const walletUrl = (kind: string, clientId = store.clientId) => `/v1/merchant/clients/${clientId}/wallets/${kind}`;
const put = (kind: string, payload: unknown, key = store.keys.test.secretKey, clientId = store.clientId) =>
  stack.request({ method: 'PUT', url: walletUrl(kind, clientId), payload, key });
const del = (kind: string, key = store.keys.test.secretKey, clientId = store.clientId) => stack.request({ method: 'DELETE', url: walletUrl(kind, clientId), key });

async function available(env: 'test' | 'live'): Promise<string[]> {
  const res = await stack.request({ method: 'GET', url: `/v1/chains/client/${store.clientId}?pk=${store.keys[env].publishableKey}` });
  expect(res.status).toBe(200);
  return res.body.availableChains.map((c: { network: string }) => c.network);
}

const walletRows = () =>
  stack.pool.any(sql.type(z.object({ store_id: z.string(), environment: z.string(), kind: z.string(), public_key: z.string() }))`
    SELECT store_id, environment, kind, public_key FROM store_wallets ORDER BY store_id, environment, kind`);

describe('PUT /v1/merchant/clients/:clientId/wallets/{evm,tron,solana}', () => {
  it('registers each wallet, answers the first address and drives rail availability', async () => {
    expect(await available('test')).toEqual([]);
    let res = await put('evm', { xpub: evmXpub });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      network: 'EVM',
      environment: 'test',
      firstAddress: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
      firstAddressPath: "m/44'/60'/0'/0/0",
      rails: ['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON'],
    });
    expect(await available('test')).toEqual(['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON']);

    res = await put('tron', { xpub: `  ${tronXpub}\n` });
    expect(res.body).toMatchObject({ network: 'TRON', firstAddress: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', firstAddressPath: "m/44'/195'/0'/0/0", rails: ['USDT_TRON'] });
    res = await put('solana', { address: solanaWallet });
    expect(res.body).toMatchObject({ network: 'SOLANA', firstAddress: solanaWallet, firstAddressPath: null, rails: ['USDT_SOL'] });
    expect(await available('test')).toEqual(['USDT_TRON', 'USDT_BSC', 'USDT_ETH', 'USDT_POLYGON', 'USDT_SOL']);
    // The trimmed key is what is stored.
    expect((await walletRows()).find((r) => r.kind === 'tron')?.public_key).toBe(tronXpub);
    // Registrations are per environment: the live side is untouched.
    expect(await available('live')).toEqual([]);
  });

  it('is repeatable, and a new key replaces the old one', async () => {
    expect((await put('evm', { xpub: evmXpub })).body.firstAddress).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    const res = await put('evm', { xpub: otherEvmXpub });
    expect(res.body.firstAddress).toBe('0x397bA96a8d213d4aF496AAa2427eFf18c2ee105F');
    expect((await walletRows()).filter((r) => r.kind === 'evm')).toEqual([{ store_id: store.clientId, environment: 'test', kind: 'evm', public_key: otherEvmXpub }]);
    await put('evm', { xpub: evmXpub });
  });

  it('registers a live key in the live environment only', async () => {
    const res = await put('tron', { xpub: tronXpub }, store.keys.live.secretKey);
    expect(res.body).toMatchObject({ environment: 'live', network: 'TRON' });
    expect(await available('live')).toEqual(['USDT_TRON']);
  });

  const refused: [string, string, unknown, number, string, string | undefined, RegExp][] = [
    ['an xprv', 'evm', { xpub: 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi' }, 400, 'invalid_field', 'xpub', /private key \(xprv\)/],
    ['a tpub', 'tron', { xpub: reversion(tronXpub, 0x043587cf) }, 400, 'invalid_field', 'xpub', /tpub keys are not accepted.*m\/44'\/195'\/0'/],
    ['a zpub', 'evm', { xpub: reversion(evmXpub, 0x04b24746) }, 400, 'invalid_field', 'xpub', /zpub keys are not accepted/],
    ['a master key', 'evm', { xpub: 'xpub661MyMwAqRbcFkPHucMnrGNzDwb6teAX1RbKQmqtEF8kK3Z7LZ59qafCjB9eCRLiTVG3uxBxgKvRgbubRhqSKXnGGb1aoaqLrpMBDrVxga8' }, 400, 'invalid_field', 'xpub', /master key \(depth 0\)/],
    ['a depth-4 key', 'evm', { xpub: reversion(evmXpub, 0x0488b21e, 4) }, 400, 'invalid_field', 'xpub', /depth 4/],
    ['a bad checksum', 'evm', { xpub: `${evmXpub.slice(0, -1)}u` }, 400, 'invalid_field', 'xpub', /checksum is wrong/],
    ['an empty xpub', 'tron', { xpub: '' }, 400, 'invalid_field', 'xpub', /is empty/],
    ['a number', 'tron', { xpub: 12345 }, 400, 'invalid_field', 'xpub', /must be a string/],
    ['no xpub', 'evm', {}, 400, 'missing_field', 'xpub', /Missing required field 'xpub'/],
    ['an unknown field', 'evm', { xpub: evmXpub, environment: 'live' }, 400, 'unknown_field', 'environment', /Unknown field 'environment'/],
    ['a token account (ATA)', 'solana', { address: solanaAta }, 400, 'invalid_field', 'address', /off the ed25519 curve/],
    ['a TRON address as Solana', 'solana', { address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' }, 400, 'invalid_field', 'address', /decodes to 25 bytes/],
    ['an xpub for Solana (which has none)', 'solana', { xpub: evmXpub }, 400, 'missing_field', 'address', /Missing required field 'address'/],
  ];
  it.each(refused)('refuses %s with a clear 400 and changes nothing', async (_what, kind, payload, status, code, param, message) => {
    const before = await walletRows();
    const res = await put(kind, payload);
    expect({ status: res.status, code: res.body.error.code, param: res.body.error.param }).toEqual({ status, code, param });
    expect(res.body.error.type).toBe('invalid_request_error');
    expect(res.body.error.message).toMatch(message);
    const sent = (payload as { xpub?: unknown }).xpub;
    if (typeof sent === 'string' && sent.startsWith('xprv')) expect(res.text).not.toContain(sent);
    expect(await walletRows()).toEqual(before);
  });

  it("answers 404 for another store's clientId or an unknown one, and writes nothing", async () => {
    const before = await walletRows();
    for (const clientId of [other.clientId, 'cli_doesnotexist000000000000', 'x']) {
      const res = await put('evm', { xpub: evmXpub }, store.keys.test.secretKey, clientId);
      expect({ clientId, status: res.status, code: res.body.error.code }).toEqual({ clientId, status: 404, code: 'not_found' });
      expect(JSON.stringify(res.body)).not.toContain(other.clientId.slice(4));
      const gone = await del('evm', store.keys.test.secretKey, clientId);
      expect(gone.status).toBe(404);
    }
    expect(await walletRows()).toEqual(before);
  });
});

describe('DELETE /v1/merchant/clients/:clientId/wallets/{evm,tron,solana}', () => {
  it('disconnects in the key environment, then says nothing is connected', async () => {
    const res = await del('evm');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, network: 'EVM', environment: 'test', rails: ['USDT_BSC', 'USDT_ETH', 'USDT_POLYGON'] });
    expect(await available('test')).toEqual(['USDT_TRON', 'USDT_SOL']);
    const again = await del('evm');
    expect(again.status).toBe(404);
    expect(again.body.error.message).toBe('No EVM wallet is connected to this store in the test environment.');
    expect((await del('solana')).status).toBe(200);
    expect(await available('test')).toEqual(['USDT_TRON']);
    // The live TRON registration is a separate one.
    expect((await del('tron', store.keys.live.secretKey)).status).toBe(200);
    expect(await available('live')).toEqual([]);
    expect(await available('test')).toEqual(['USDT_TRON']);
  });
});

describe('authentication', () => {
  it.each(['tron', 'evm', 'solana'])('PUT and DELETE %s need a secret key', async (kind) => {
    const before = await walletRows();
    const payload = kind === 'solana' ? { address: solanaWallet } : { xpub: kind === 'evm' ? evmXpub : tronXpub };
    await expectSecretKeyRequired(stack, { method: 'PUT', url: walletUrl(kind), payload });
    await expectSecretKeyRequired(stack, { method: 'DELETE', url: walletUrl(kind) });
    expect(await walletRows()).toEqual(before);
  });
});
