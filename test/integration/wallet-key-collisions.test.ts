import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { deriveAddress } from '../../rails/chain/derive-address.js';
import { randomAccountXpubs, solanaWallet } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Issue 12, item 2: an extended public key belongs to one store, and no two links, in any stores
 * or environments, ever share a receiving address — also for keys shared before that rule, and
 * for a key one store removed and another registered.
 */
let stack: Stack;
const testSolanaMint = 'Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr';

beforeAll(async () => {
  stack = await startStack({ USDT_CONTRACT_USDT_SOL_TEST: testSolanaMint });
});
afterAll(async () => stack?.stop());

const register = (store: CreatedStore, kind: 'evm' | 'tron' | 'solana', value: string, env: 'test' | 'live' = 'test') =>
  stack.request({
    method: 'PUT',
    url: `/v1/merchant/clients/${store.clientId}/wallets/${kind}`,
    payload: kind === 'solana' ? { address: value } : { xpub: value },
    key: store.keys[env].secretKey,
  });
const unregister = (store: CreatedStore, kind: 'evm' | 'tron') =>
  stack.request({ method: 'DELETE', url: `/v1/merchant/clients/${store.clientId}/wallets/${kind}`, key: store.keys.test.secretKey });
const createLink = (store: CreatedStore, enabledRails: string[], env: 'test' | 'live' = 'test') =>
  stack.request({ method: 'POST', url: '/v1/payment-links', key: store.keys[env].secretKey, payload: { usdtAmount: '5', enabledRails } });

const keysOf = (storeId: string) =>
  stack.pool.anyFirst(sql.type(z.object({ public_key: z.string() }))`SELECT public_key FROM store_wallets WHERE store_id = ${storeId}`);
const watchedOwners = (address: string) =>
  stack.pool.anyFirst(sql.type(z.object({ owner_id: z.string() }))`SELECT owner_id FROM watched_addresses WHERE lower(address) = lower(${address})`);

/** Writes a registration as releases before the one-store rule could have (two stores, one key). */
async function legacyRegistration(store: CreatedStore, kind: 'evm' | 'tron' | 'solana', publicKey: string) {
  await stack.pool.query(sql.unsafe`INSERT INTO store_wallets (store_id, environment, kind, public_key) VALUES (${store.clientId}, 'test', ${kind}, ${publicKey})`);
}

describe('registering a key another store holds', () => {
  it('is a 409 conflict_error that names no store, for either slot, and stores nothing', async () => {
    const first = await stack.createStore('Acme Original');
    const second = await stack.createStore('Copycat');
    const xpubs = randomAccountXpubs();
    expect((await register(first, 'evm', xpubs.evm)).status).toBe(200);
    expect((await register(first, 'tron', xpubs.tron)).status).toBe(200);

    // The same key in the other slot is the same wallet: refused too.
    for (const [kind, xpub] of [['evm', xpubs.evm], ['tron', xpubs.tron], ['tron', xpubs.evm]] as const) {
      const res = await register(second, kind, xpub);
      expect({ kind, status: res.status }).toEqual({ kind, status: 409 });
      expect(res.body.error).toMatchObject({ type: 'conflict_error', code: 'wallet_key_in_use', param: 'xpub' });
      expect(res.body.error.message).toMatch(/already registered with another store/);
      expect(res.text).not.toContain(first.clientId);
      expect(res.text).not.toContain('Acme');
      expect(res.text).not.toContain(xpub);
    }
    expect(await keysOf(second.clientId)).toEqual([]);

    // The store's own other environment may use it: its links take other addresses (below).
    expect((await register(first, 'evm', xpubs.evm, 'live')).status).toBe(200);
    // A Solana wallet is not an address book: two stores may share one (links differ by reference).
    expect((await register(first, 'solana', solanaWallet)).status).toBe(200);
    expect((await register(second, 'solana', solanaWallet)).status).toBe(200);
  });

  it('gives test and live links of one store with the same key different addresses', async () => {
    const store = await stack.createStore('Both environments');
    const { evm } = randomAccountXpubs();
    expect((await register(store, 'evm', evm, 'test')).status).toBe(200);
    expect((await register(store, 'evm', evm, 'live')).status).toBe(200);
    const test = await createLink(store, ['USDT_BSC'], 'test');
    const live = await createLink(store, ['USDT_BSC'], 'live');
    expect([test.status, live.status]).toEqual([201, 201]);
    expect(test.body.bscAddress).not.toBe(live.body.bscAddress);
    // Both are on the key's link branch, one index after the other.
    expect([test.body.bscAddress, live.body.bscAddress].sort()).toEqual([deriveAddress(evm, 'evm', 1, 0), deriveAddress(evm, 'evm', 1, 1)].sort());
  });
});

describe('link addresses of a key two stores share', () => {
  it('are all distinct, also when links are created at the same time, and never a 500', async () => {
    // Data written before the one-store rule: both stores hold the same keys and Solana wallet.
    const a = await stack.createStore('Shared A');
    const b = await stack.createStore('Shared B');
    const xpubs = randomAccountXpubs();
    for (const store of [a, b]) {
      await legacyRegistration(store, 'evm', xpubs.evm);
      await legacyRegistration(store, 'tron', xpubs.tron);
      await legacyRegistration(store, 'solana', solanaWallet);
    }
    // Each may still register its key again: it changes nothing.
    expect((await register(b, 'evm', xpubs.evm)).status).toBe(200);
    const rails = ['USDT_TRON', 'USDT_BSC', 'USDT_SOL'];
    const first = await createLink(a, rails);
    const second = await createLink(b, rails);
    expect([first.status, second.status]).toEqual([201, 201]);
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => createLink(i % 2 ? a : b, rails)));
    const links = [first, second, ...burst];
    expect(links.map((l) => l.status)).toEqual(Array(10).fill(201));

    const evm = links.map((l) => l.body.bscAddress as string);
    const tron = links.map((l) => l.body.tronAddress as string);
    expect(new Set(evm).size).toBe(10);
    expect(new Set(tron).size).toBe(10);
    // Each address is watched for its own link only.
    for (const l of links) {
      expect(await watchedOwners(l.body.bscAddress)).toEqual([l.body.id]);
      expect(await watchedOwners(l.body.tronAddress)).toEqual([l.body.id]);
    }
    // The Solana wallet is the same for all: each link is found by its own reference.
    expect(new Set(links.map((l) => l.body.solanaAddress))).toEqual(new Set([solanaWallet]));
    expect(new Set(links.map((l) => l.body.solanaReference)).size).toBe(10);
    for (const l of links) expect(await watchedOwners(l.body.solanaReference)).toEqual([l.body.id]);
  });
});

describe('a key one store removed and another registered', () => {
  it('never hands the second store an address of the first store’s links, open or closed', async () => {
    const first = await stack.createStore('Moved out');
    const second = await stack.createStore('Moved in');
    const { evm } = randomAccountXpubs();
    expect((await register(first, 'evm', evm)).status).toBe(200);
    const old = await createLink(first, ['USDT_BSC']);
    expect(old.status).toBe(201);
    expect((await unregister(first, 'evm')).status).toBe(200);

    // No store holds the key now, so the other store may register it.
    expect((await register(second, 'evm', evm)).status).toBe(200);
    const open = await createLink(second, ['USDT_BSC']);
    expect(open.status).toBe(201);
    expect(open.body.bscAddress).not.toBe(old.body.bscAddress);
    expect(await watchedOwners(old.body.bscAddress)).toEqual([old.body.id]);

    // The first link's watch window ends: its address is still never handed out again.
    await stack.pool.query(sql.unsafe`DELETE FROM watched_addresses WHERE owner_id = ${old.body.id}`);
    const later = await createLink(second, ['USDT_BSC']);
    expect(later.status).toBe(201);
    expect([old.body.bscAddress, open.body.bscAddress]).not.toContain(later.body.bscAddress);
    // And now the first store cannot take the key back while the second holds it.
    expect((await register(first, 'evm', evm)).status).toBe(409);
  });

  it('skips every address handed out before, however many, instead of failing', async () => {
    // An address from before the key's index sequence existed (links created by an older release,
    // whose counters were per store) is in the ledger of handed-out addresses: allocation steps over it.
    const store = await stack.createStore('Legacy ledger');
    const { evm } = randomAccountXpubs();
    const taken = Array.from({ length: 70 }, (_, i) => deriveAddress(evm, 'evm', 1, i).toLowerCase());
    for (const address of taken) {
      await stack.pool.query(sql.unsafe`INSERT INTO link_addresses (family, address, owner_id) VALUES ('evm', ${address}, 'pl_from_an_older_release')`);
    }
    expect((await register(store, 'evm', evm)).status).toBe(200);
    const link = await createLink(store, ['USDT_BSC']);
    expect(link.status).toBe(201);
    expect(link.body.bscAddress).toBe(deriveAddress(evm, 'evm', 1, 70));
    // No index is wasted after the skip: the next link takes the next one.
    expect((await createLink(store, ['USDT_BSC'])).body.bscAddress).toBe(deriveAddress(evm, 'evm', 1, 71));
  });

  it('steps over handed-out addresses of either family or both in a two-address link, wasting no index, in either rail order', async () => {
    // A link's EVM and TRON addresses are first tried together (one reservation, one record); a
    // family whose address was handed out before goes on alone, and neither wastes an index.
    const store = await stack.createStore('Legacy ledger, two families');
    const { evm, tron } = randomAccountXpubs();
    const at = (family: 'evm' | 'tron', i: number) => deriveAddress(family === 'evm' ? evm : tron, family, 1, i);
    const handOut = async (family: 'evm' | 'tron', indexes: number[]) => {
      for (const i of indexes) {
        const address = family === 'evm' ? at(family, i).toLowerCase() : at(family, i);
        await stack.pool.query(sql.unsafe`INSERT INTO link_addresses (family, address, owner_id) VALUES (${family}, ${address}, 'pl_from_an_older_release')`);
      }
    };
    expect((await register(store, 'evm', evm)).status).toBe(200);
    expect((await register(store, 'tron', tron)).status).toBe(200);
    const links: Array<{ body: { id: string; bscAddress: string; tronAddress: string } }> = [];
    const take = async (rails: string[]) => {
      const link = await createLink(store, rails);
      expect(link.status).toBe(201);
      links.push(link);
      return [link.body.bscAddress, link.body.tronAddress];
    };

    await handOut('tron', [0, 1, 2]); // the second family in the statements' order collides
    expect(await take(['USDT_BSC', 'USDT_TRON'])).toEqual([at('evm', 0), at('tron', 3)]);
    await handOut('evm', [1, 2]); // the first family collides
    expect(await take(['USDT_TRON', 'USDT_BSC'])).toEqual([at('evm', 3), at('tron', 4)]);
    await handOut('evm', [4]);
    await handOut('tron', [5, 6]); // both collide at once
    expect(await take(['USDT_BSC', 'USDT_TRON'])).toEqual([at('evm', 5), at('tron', 7)]);

    // A burst in both rail orders: every address distinct, the indexes contiguous.
    await Promise.all(Array.from({ length: 6 }, (_, i) => take(i % 2 ? ['USDT_TRON', 'USDT_BSC'] : ['USDT_BSC', 'USDT_TRON'])));
    const indexOf = (family: 'evm' | 'tron', address: string) => Array.from({ length: 20 }, (_, i) => at(family, i)).indexOf(address);
    expect(links.map((l) => indexOf('evm', l.body.bscAddress)).sort((a, b) => a - b)).toEqual([0, 3, 5, 6, 7, 8, 9, 10, 11]);
    expect(links.map((l) => indexOf('tron', l.body.tronAddress)).sort((a, b) => a - b)).toEqual([3, 4, 7, 8, 9, 10, 11, 12, 13]);
    // No index wasted: the next link takes the next one of each.
    expect(await take(['USDT_TRON', 'USDT_BSC'])).toEqual([at('evm', 12), at('tron', 14)]);

    // The ledger records each address under its own family, key, index and link; the watch set likewise.
    const ledger = await stack.pool.any(sql.type(z.object({ family: z.string(), address: z.string(), public_key: z.string(), derivation_index: z.number(), owner_id: z.string() }))`
      SELECT family, address, public_key, derivation_index, owner_id FROM link_addresses WHERE owner_id = ANY(${sql.array(links.map((l) => l.body.id), 'text')})`);
    expect(ledger).toHaveLength(links.length * 2);
    for (const l of links) {
      const evmIndex = indexOf('evm', l.body.bscAddress);
      const tronIndex = indexOf('tron', l.body.tronAddress);
      expect(ledger.filter((r) => r.owner_id === l.body.id).sort((a, b) => a.family.localeCompare(b.family))).toEqual([
        { family: 'evm', address: l.body.bscAddress.toLowerCase(), public_key: evm, derivation_index: evmIndex, owner_id: l.body.id },
        { family: 'tron', address: l.body.tronAddress, public_key: tron, derivation_index: tronIndex, owner_id: l.body.id },
      ]);
      expect(await watchedOwners(l.body.bscAddress)).toEqual([l.body.id]);
      expect(await watchedOwners(l.body.tronAddress)).toEqual([l.body.id]);
    }
  });
});
