// Cost growth: p50/p99 of creating a link and of reading one, through the real API, PostgreSQL and
// Temporal, with 10,000 and then 1,000,000 links already in the database (seeded directly, each
// confirmed with one payment, spread over 100 stores). A hot path that scans grows with the table;
// one on an index stays flat.
import { sql } from 'slonik';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';
import { runConcurrently } from './load.js';

/** Seeds links `from`…`to - 1` (and one confirmed payment each) in batches. */
async function seed(stack: Stack, from: number, to: number): Promise<void> {
  for (let start = from; start < to; start += 50_000) {
    const end = Math.min(to, start + 50_000);
    await stack.pool.query(sql.unsafe`
      INSERT INTO stores (id, name) SELECT 'cli_seed' || lpad(to_hex(s), 20, '0'), 'Seed ' || s FROM generate_series(0, 99) s ON CONFLICT DO NOTHING`);
    await stack.pool.query(sql.unsafe`
      INSERT INTO payment_links (id, kind, store_id, environment, status, usdt_amount, enabled_rails, evm_address, expires_at, created_at,
        confirmed_rail, confirmed_at, external_id, workflow_started)
      SELECT 'pl_' || lpad(to_hex(g), 24, '0'), 'payment_link', 'cli_seed' || lpad(to_hex(g % 100), 20, '0'), 'test', 'CONFIRMED', 10,
        ARRAY['USDT_BSC'], '0x' || lpad(to_hex(g), 40, '0'), now() - interval '1 day', now() - interval '2 days',
        'USDT_BSC', now() - interval '2 days', '0x' || lpad(to_hex(g), 64, '0'), true
      FROM generate_series(${start}::int, ${end - 1}::int) g`);
    await stack.pool.query(sql.unsafe`
      INSERT INTO link_payments (link_id, payment_key, rail, external_id, amount_minor, decimals, state, disposition)
      SELECT 'pl_' || lpad(to_hex(g), 24, '0'), 'USDT_BSC:' || g, 'USDT_BSC', '0x' || lpad(to_hex(g), 64, '0'), 10000000, 6, 'confirmed', 'payment'
      FROM generate_series(${start}::int, ${end - 1}::int) g`);
  }
  await stack.pool.query(sql.unsafe`ANALYZE`);
}

export async function benchGrowth(sizes = [10_000, 1_000_000]) {
  await startTestTemporal();
  const stack = await startStack();
  try {
    const store = await stack.createStore('Growth');
    await connectAllRails(stack, store.clientId);
    const key = store.keys.test.secretKey;
    const created: string[] = [];
    const create = async () => {
      const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC', 'USDT_TRON'] } });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
      created.push(res.body.id);
    };
    const get = async (i: number) => {
      // Spread over source addresses: the per-IP limit is not what is measured.
      const res = await stack.request({ method: 'GET', url: `/v1/payment-links/${created[i % created.length]}`, key, localAddress: `127.0.2.${(i % 50) + 1}` });
      if (res.status !== 200) throw new Error(`get: ${res.status}`);
    };
    const results: Record<string, unknown> = {};
    let seeded = 0;
    for (const size of sizes) {
      const t0 = Date.now();
      await seed(stack, seeded, size);
      seeded = size;
      const seedSeconds = Math.round((Date.now() - t0) / 1000);
      await runConcurrently(4, 20, create); // warm-up
      results[`links_${size}`] = {
        seedSeconds,
        create_c8: await runConcurrently(8, 200, create),
        get_c8: await runConcurrently(8, 2000, get),
      };
    }
    return results;
  } finally {
    await stack.stop();
    await stopTestTemporal();
  }
}
