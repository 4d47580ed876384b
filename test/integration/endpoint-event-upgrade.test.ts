import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { openPool } from '../../db/pool.js';
import { createStore } from '../../db/store-repo.js';
import { createTestDatabase } from '../helpers/database.js';

/**
 * Migration 0029: endpoints registered before `reconciliation.mismatch`, `webhook_endpoint.disabled`
 * and `webhook_delivery.exhausted` existed. One that took every type then takes the new ones too;
 * one that chose some keeps its choice. Run on a migrated database, as an upgrade would meet it.
 */
const migration = new URL('../../db/migrations/0029_endpoints_take_new_event_types.sql', import.meta.url);
const oldEverything = ['payment_link.confirmed', 'transfer.confirmed', 'invoice.paid'];

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let pool: DatabasePool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = await openPool(db.url, 2);
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

async function endpoint(storeId: string, id: string, events: string[]): Promise<void> {
  await pool.query(sql.unsafe`INSERT INTO webhook_endpoints (id, store_id, environment, url, enabled_events, secret)
    VALUES (${id}, ${storeId}, 'test', 'https://shop.example/hooks', ${sql.array(events, 'text')}, 'v1:not-a-real-ciphertext')`);
}
const eventsOf = (id: string) =>
  pool.oneFirst(sql.type(z.object({ enabled_events: z.array(z.string()) }))`SELECT enabled_events FROM webhook_endpoints WHERE id = ${id}`);

describe('migration 0029: endpoints that took every event type', () => {
  it('adds the newer types to an endpoint that took all the old ones, and leaves a chosen subset alone, once', async () => {
    const store = await createStore(pool, 'Upgraded shop', 'sk');
    await endpoint(store.clientId, 'we_all_old', oldEverything);
    await endpoint(store.clientId, 'we_all_with_mismatch', [...oldEverything, 'reconciliation.mismatch']);
    await endpoint(store.clientId, 'we_some', ['payment_link.confirmed', 'invoice.paid']);
    const upgrade = await readFile(migration, 'utf8');

    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(upgrade);
      await client.query(upgrade); // a second run adds nothing
    } finally {
      await client.end();
    }

    const newer = ['reconciliation.mismatch', 'webhook_endpoint.disabled', 'webhook_delivery.exhausted'];
    expect(await eventsOf('we_all_old')).toEqual([...oldEverything, ...newer]);
    expect(await eventsOf('we_all_with_mismatch')).toEqual([...oldEverything, ...newer]);
    expect(await eventsOf('we_some')).toEqual(['payment_link.confirmed', 'invoice.paid']);
  });
});

describe('migration 0038: sweep.completed and sweep.failed', () => {
  it('adds them to an endpoint that took every type there was, and leaves a chosen subset alone, once', async () => {
    const store = await createStore(pool, 'Sweeping upgraded shop', 'sk');
    const before = [...oldEverything, 'reconciliation.mismatch', 'webhook_endpoint.disabled', 'webhook_delivery.exhausted', 'mobile_money.unallocated'];
    await endpoint(store.clientId, 'we_all_0037', before);
    await endpoint(store.clientId, 'we_most_0037', before.slice(0, -1));
    // The migration's endpoint statement (its tables exist already on this migrated database).
    const text = await readFile(new URL('../../db/migrations/0038_sweep_ledger.sql', import.meta.url), 'utf8');
    const upgrade = text.slice(text.indexOf('UPDATE webhook_endpoints'));
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(upgrade);
      await client.query(upgrade);
    } finally {
      await client.end();
    }
    expect(await eventsOf('we_all_0037')).toEqual([...before, 'sweep.completed', 'sweep.failed']);
    expect(await eventsOf('we_most_0037')).toEqual(before.slice(0, -1));
  });
});
