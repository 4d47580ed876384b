// What the treasury's balance read costs for 10,000 handed-out addresses (docs/treasury.md), on a
// real local chain (anvil) and PostgreSQL: the chain reads alone (token and native balances at one
// block), through Multicall3's aggregate3 deployed (250 holders, 500 calls, an eth_call; as on every
// public EVM network) and deployless with JSON-RPC batches of eth_getBalance (a bare chain); and the
// whole of GET /v1/treasury/balances' work (the store's addresses from the database, every balance,
// the totals, one page). `npm run bench treasury` (opt-in).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'slonik';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { railSettingsFrom } from '../config/rail-settings.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { readEvmHoldings } from '../rails/evm/holdings.js';
import type { ServiceDeps } from '../services/deps.js';
import { treasuryBalances } from '../services/treasury/balances.js';
import { deployTestToken, startAnvil } from '../test/helpers/anvil.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { deployMulticall3 } from '../test/helpers/multicall.js';

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; eventLoopMaxMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const t0 = performance.now();
  const value = await fn();
  const ms = Math.round(performance.now() - t0);
  h.disable();
  return { value, ms, eventLoopMaxMs: Math.round(h.max / 1e6) };
}

export async function benchTreasury(addresses = 10_000, funded = 100) {
  const anvil = await startAnvil();
  const usdt = await deployTestToken(anvil, { decimals: 18 });
  const db = await createTestDatabase();
  const pool = await openPool(db.url, 4);
  try {
    const holders: Address[] = Array.from({ length: addresses }, () => privateKeyToAddress(generatePrivateKey()).toLowerCase() as Address);
    for (let i = 0; i < funded; i++) {
      await usdt.mint(holders[i]!, 10n ** 18n);
      await anvil.rpc('anvil_setBalance', [holders[i]!, '0x1000']);
    }
    const deployless = await timed(() => readEvmHoldings(anvil.url, usdt.address, holders));
    await deployMulticall3(anvil);
    // Another spelling of the URL: whether Multicall3 is deployed is remembered per URL.
    const deployed = await timed(() => readEvmHoldings(`${anvil.url}/`, usdt.address, holders));

    // The store's links and their addresses, as link creation writes them (in bulk).
    const store = await createStore(pool, 'Bench', 'sk');
    await pool.query(sql.unsafe`
      INSERT INTO payment_links (id, store_id, environment, status, usdt_amount, enabled_rails, expires_at)
      SELECT 'pl_bench' || i, ${store.clientId}, 'test', 'PENDING', 1, ARRAY['USDT_BSC'], now() + interval '1 hour'
      FROM generate_series(1, ${addresses}) AS i`);
    await pool.query(sql.unsafe`
      INSERT INTO link_addresses (family, address, public_key, derivation_index, owner_id)
      SELECT 'evm', a, 'xpub-bench', i - 1, 'pl_bench' || i FROM unnest(${sql.array(holders, 'text')}::text[]) WITH ORDINALITY AS t(a, i)`);
    const rails = railSettingsFrom({ RPC_URL_USDT_BSC_TEST: `${anvil.url}/`, USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CHAIN_ID_USDT_BSC_TEST: String(anvil.chainId) });
    const deps = { pool, config: { rails } } as unknown as Pick<ServiceDeps, 'pool' | 'config'>;
    const route = await timed(() => treasuryBalances(deps, { storeId: store.clientId, environment: 'test' }, { rail: 'USDT_BSC', limit: 100 }));
    const rail = route.value[0]!;
    return {
      addresses,
      funded,
      deployedMulticall: { ms: deployed.ms, requests: deployed.value.requests, allRead: deployed.value.token.every((b) => b !== undefined) && deployed.value.native.every((b) => b !== undefined), eventLoopMaxMs: deployed.eventLoopMaxMs },
      deploylessAndRpcBatch: { ms: deployless.ms, requests: deployless.value.requests, allRead: deployless.value.token.every((b) => b !== undefined) && deployless.value.native.every((b) => b !== undefined), eventLoopMaxMs: deployless.eventLoopMaxMs },
      treasuryBalancesService: { ms: route.ms, status: rail.status, addressCount: rail.addressCount, unread: rail.unreadCount, totalToken: rail.totalToken, eventLoopMaxMs: route.eventLoopMaxMs },
    };
  } finally {
    await pool.end();
    await db.drop();
    await anvil.stop();
  }
}

if (process.argv.some((a) => a.endsWith('bench/treasury.ts'))) {
  console.log(JSON.stringify(await benchTreasury(Number(process.argv[2] ?? 10_000))));
}
