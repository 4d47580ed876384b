// What the treasury's TRON balance read costs for 10,000 handed-out addresses (docs/treasury.md,
// "TRON"), against the TronGrid emulator and PostgreSQL: the chain read alone (Multicall3's
// aggregate3 through /wallet/triggerconstantcontract, 200 holders a call, USDT and TRX together),
// and the whole of GET /v1/treasury/balances' work for the rail (the addresses from the database,
// every balance, the totals, one page). `npm run bench treasury-tron` (opt-in).
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'slonik';
import { railSettingsFrom } from '../config/rail-settings.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { startTronGridEmulator } from '../emulators/trongrid/server.js';
import { tronAddressFromBytes } from '../rails/tron/address.js';
import { readTronHoldings, tronMulticall3 } from '../rails/tron/holdings.js';
import type { ServiceDeps } from '../services/deps.js';
import { treasuryBalances } from '../services/treasury/balances.js';
import { createTestDatabase } from '../test/helpers/database.js';

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; eventLoopMaxMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const t0 = performance.now();
  const value = await fn();
  const ms = Math.round(performance.now() - t0);
  h.disable();
  return { value, ms, eventLoopMaxMs: Math.round(h.max / 1e6) };
}

export async function benchTreasuryTron(addresses = 10_000, funded = 100) {
  const tron = await startTronGridEmulator();
  const usdt = tronAddressFromBytes(randomBytes(20));
  tron.addToken(usdt);
  tron.addMulticall3(tronMulticall3.test);
  const db = await createTestDatabase();
  const pool = await openPool(db.url, 4);
  try {
    const holders = Array.from({ length: addresses }, () => tronAddressFromBytes(randomBytes(20)));
    for (let i = 0; i < funded; i++) {
      tron.setBalance(usdt, holders[i]!, 1_000_000n);
      tron.setTrx(holders[i]!, 4_096n);
    }
    const calls0 = tron.calls;
    const chain = await timed(() => readTronHoldings(tron.url, tronMulticall3.test, usdt, holders));
    const chainCalls = tron.calls - calls0;

    const store = await createStore(pool, 'Bench', 'sk');
    await pool.query(sql.unsafe`
      INSERT INTO payment_links (id, store_id, environment, status, usdt_amount, enabled_rails, expires_at)
      SELECT 'pl_bench' || i, ${store.clientId}, 'test', 'PENDING', 1, ARRAY['USDT_TRON'], now() + interval '1 hour'
      FROM generate_series(1, ${addresses}) AS i`);
    await pool.query(sql.unsafe`
      INSERT INTO link_addresses (family, address, public_key, derivation_index, owner_id)
      SELECT 'tron', a, 'xpub-bench', i - 1, 'pl_bench' || i FROM unnest(${sql.array(holders, 'text')}::text[]) WITH ORDINALITY AS t(a, i)`);
    const rails = railSettingsFrom({ RPC_URL_USDT_TRON_TEST: tron.url, USDT_CONTRACT_USDT_TRON_TEST: usdt });
    const deps = { pool, config: { rails } } as unknown as Pick<ServiceDeps, 'pool' | 'config'>;
    const route = await timed(() => treasuryBalances(deps, { storeId: store.clientId, environment: 'test' }, { rail: 'USDT_TRON', limit: 100 }));
    const rail = route.value[0]!;
    return {
      addresses,
      funded,
      chainOnly: { ms: chain.ms, requests: chain.value.requests, constantCalls: chainCalls, allRead: chain.value.token.every((b) => b !== undefined) && chain.value.native.every((b) => b !== undefined), eventLoopMaxMs: chain.eventLoopMaxMs },
      treasuryBalancesService: { ms: route.ms, status: rail.status, addressCount: rail.addressCount, unread: rail.unreadCount, totalToken: rail.totalToken, totalNative: rail.totalNative, eventLoopMaxMs: route.eventLoopMaxMs },
    };
  } finally {
    await pool.end();
    await db.drop();
    await tron.close();
  }
}

if (process.argv.some((a) => a.endsWith('bench/treasury-tron.ts'))) {
  console.log(JSON.stringify(await benchTreasuryTron(Number(process.argv[2] ?? 10_000))));
}
