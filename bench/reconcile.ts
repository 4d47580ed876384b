// What the reconciler costs per 10,000 watched addresses (docs/reconciliation.md), on a real local
// chain (anvil) and PostgreSQL: the balance reads alone, through Multicall3's aggregate3 deployed
// (500 a call, as on every public EVM network) and deployless (140 a call, a bare chain), the same
// reads one eth_call per address (what a chain without a batch form costs, like TRON's constant
// calls), and whole runs of the reconciler's pages (database + balances, deployed Multicall3),
// first and steady state, with the RPC requests they made and the worst event-loop delay.
// `npm run bench reconcile` (opt-in).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'slonik';
import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { railSettingsFrom } from '../config/rail-settings.js';
import { openPool } from '../db/pool.js';
import { createStore } from '../db/store-repo.js';
import { inParallel } from '../rails/chain/reads.js';
import { reconcileChain } from '../rails/chain/reconcile-view.js';
import { balanceClient, holdersPerCall, holdersPerDeploylessCall, tokenBalancesAt } from '../rails/evm/balances.js';
import { reconcilePage } from '../services/reconciliation/reconcile.js';
import { deployTestToken, startAnvil } from '../test/helpers/anvil.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { startFlakyRpc } from '../test/helpers/flaky-rpc.js';
import { deployMulticall3 } from '../test/helpers/multicall.js';

const ms = (t0: number) => Math.round(performance.now() - t0);

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; eventLoopMaxMs: number; eventLoopP99Ms: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const t0 = performance.now();
  const value = await fn();
  const took = ms(t0);
  h.disable();
  return { value, ms: took, eventLoopMaxMs: Math.round(h.max / 1e6), eventLoopP99Ms: Math.round(h.percentile(99) / 1e6) };
}

export async function benchReconcile(addresses = 10_000, funded = 100) {
  const anvil = await startAnvil();
  const usdt = await deployTestToken(anvil, { decimals: 18 });
  const db = await createTestDatabase();
  const pool = await openPool(db.url, 4);
  const proxy = await startFlakyRpc(anvil.url);
  try {
    const holders: Address[] = Array.from({ length: addresses }, () => privateKeyToAddress(generatePrivateKey()).toLowerCase() as Address);
    const store = await createStore(pool, 'Bench', 'sk');
    // The links and their watched addresses, as link creation writes them (in bulk).
    await pool.query(sql.unsafe`
      INSERT INTO payment_links (id, store_id, environment, status, usdt_amount, enabled_rails, expires_at)
      SELECT 'pl_bench' || i, ${store.clientId}, 'test', 'PENDING', 1, ARRAY['USDT_BSC'], now() + interval '1 hour'
      FROM generate_series(1, ${addresses}) AS i`);
    await pool.query(sql.unsafe`
      INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
      SELECT 'evm', 'test', a, 'payment_link', 'pl_bench' || i, ${store.clientId}, now() + interval '1 day'
      FROM unnest(${sql.array(holders, 'text')}::text[]) WITH ORDINALITY AS t(a, i)`);
    // Some are paid, and the ledger recorded those payments: every balance matches.
    for (let i = 0; i < funded; i++) {
      const tx = await usdt.mint(holders[i]!, 10n ** 18n);
      const block = await anvil.publicClient.getTransactionReceipt({ hash: tx });
      await pool.query(sql.unsafe`
        INSERT INTO chain_deposits (rail, environment, tx_hash, log_index, to_address, amount_minor, decimals, block_number, block_hash, owner_kind, owner_id, store_id, state)
        VALUES ('USDT_BSC', 'test', ${tx}, 0, ${holders[i]!}, ${String(10n ** 18n)}, 18, ${String(block.blockNumber)}, ${block.blockHash}, 'payment_link', ${`pl_bench${i + 1}`}, ${store.clientId}, 'confirmed')`);
    }
    await anvil.rpc('anvil_mine', ['0x2']);
    const head = await anvil.publicClient.getBlockNumber({ cacheTime: 0 });

    const deployless = await timed(() => tokenBalancesAt(anvil.url, usdt.address, holders, head));
    await deployMulticall3(anvil);
    // Another spelling of the URL: whether Multicall3 is deployed is remembered per URL.
    const deployed = await timed(() => tokenBalancesAt(`${anvil.url}/`, usdt.address, holders, head));
    const client = balanceClient(anvil.url);
    const perAddress = await timed(() =>
      inParallel(holders, 8, (h) => client.readContract({ address: usdt.address, abi: erc20Abi, functionName: 'balanceOf', args: [h], blockNumber: head })),
    );

    const rails = railSettingsFrom({ RPC_URL_USDT_BSC_TEST: proxy.url, USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CONFIRMATIONS_USDT_BSC: '1' });
    const chain = reconcileChain(rails, 'USDT_BSC', 'test')!;
    const run = async () => {
      const before = proxy.calls.length;
      const totals = { pages: 0, checked: 0, rescanned: 0, mismatches: 0 };
      const t = await timed(async () => {
        let after: string | null = null;
        do {
          const page = await reconcilePage({ pool, dispatchEvent: async () => undefined }, chain, { after, limit: 500 });
          totals.pages++;
          totals.checked += page.checked;
          totals.rescanned += page.rescanned;
          totals.mismatches += page.mismatches;
          after = page.next;
        } while (after !== null);
      });
      const calls = proxy.calls.slice(before);
      return { ...totals, ms: t.ms, rpcRequests: calls.length, ethCalls: calls.filter((c) => c.method === 'eth_call').length, eventLoopMaxMs: t.eventLoopMaxMs, eventLoopP99Ms: t.eventLoopP99Ms };
    };
    const first = await run();
    const steady = await run();
    return {
      addresses,
      funded,
      balancesDeployedMulticall: { ms: deployed.ms, ethCalls: Math.ceil(addresses / holdersPerCall), allRead: deployed.value.every((b) => b !== undefined), eventLoopMaxMs: deployed.eventLoopMaxMs },
      balancesDeploylessMulticall: { ms: deployless.ms, ethCalls: Math.ceil(addresses / holdersPerDeploylessCall), allRead: deployless.value.every((b) => b !== undefined), eventLoopMaxMs: deployless.eventLoopMaxMs },
      balancesOnePerAddress: { ms: perAddress.ms, ethCalls: addresses, concurrency: 8, eventLoopMaxMs: perAddress.eventLoopMaxMs },
      reconcileFirstRun: first,
      reconcileSteadyRun: steady,
    };
  } finally {
    await proxy.close();
    await pool.end();
    await db.drop();
    await anvil.stop();
  }
}

if (process.argv.some((a) => a.endsWith('bench/reconcile.ts'))) {
  console.log(JSON.stringify(await benchReconcile(Number(process.argv[2] ?? 10_000))));
}
