import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPool, sql, type DatabasePool, type Interceptor, type QueryResultRow } from 'slonik';
import { findLinkDeposit } from '../../db/deposit-evidence-repo.js';
import { findInvoiceView } from '../../db/invoice-repo.js';
import { stopWatchingOwner } from '../../db/link-payment-repo.js';
import { openPool } from '../../db/pool.js';
import { lastDeposits } from '../../db/solana-reference-repo.js';
import { createTestDatabase } from '../helpers/database.js';

/**
 * Every query of a hot or periodic path that finds rows by their owner uses an index, with the
 * tables at a size where PostgreSQL would rather scan than miss one. The repositories' own SQL is
 * planned: a pool whose interceptor turns each statement into `EXPLAIN (FORMAT JSON)` of itself.
 */
let db: { url: string; drop: () => Promise<void> };
let pool: DatabasePool;
const rows = 60_000;

beforeAll(async () => {
  db = await createTestDatabase();
  pool = await openPool(db.url, 2);
  // Owners and deposits at production scale, seeded directly.
  await pool.query(sql.unsafe`
    INSERT INTO chain_deposits (rail, environment, tx_hash, log_index, to_address, amount_minor, decimals, block_number, owner_kind, owner_id, store_id, state)
    SELECT 'USDT_BSC', 'test', 'tx' || g, 0, 'addr' || g, 1000000, 18, g, CASE WHEN g % 2 = 0 THEN 'invoice' ELSE 'payment_link' END, 'pl_' || g, 'store', 'confirmed'
    FROM generate_series(1, ${rows}) g`);
  await pool.query(sql.unsafe`
    INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
    SELECT 'evm', 'test', 'addr' || g, 'payment_link', 'pl_' || g, 'store', now() + interval '1 hour'
    FROM generate_series(1, ${rows}) g`);
  await pool.query(sql.unsafe`ANALYZE chain_deposits`);
  await pool.query(sql.unsafe`ANALYZE watched_addresses`);
}, 120_000);
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

/** The plans of every statement `work` sends (it is not executed: EXPLAIN without ANALYZE). */
async function plansOf(work: (explaining: DatabasePool) => Promise<unknown>): Promise<unknown[]> {
  const plans: unknown[] = [];
  const explain: Interceptor = {
    name: 'explain',
    transformQuery: (_context, query) => ({ ...query, sql: `EXPLAIN (FORMAT JSON) ${query.sql}` }),
    afterQueryExecution: (_context, _query, result) => {
      plans.push((result.rows[0] as QueryResultRow)['QUERY PLAN']);
      return null;
    },
  };
  const explaining = await createPool(db.url, { interceptors: [explain], maximumPoolSize: 1 });
  try {
    await work(explaining).catch(() => undefined); // the plan rows do not parse as the repository's rows
  } finally {
    await explaining.end();
  }
  expect(plans.length).toBeGreaterThan(0);
  return plans;
}

/** The tables a plan reads from start to end. */
function seqScannedTables(plan: unknown): string[] {
  const found: string[] = [];
  const visit = (node: any) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach(visit);
    if (node['Node Type'] === 'Seq Scan') found.push(node['Relation Name']);
    for (const value of Object.values(node)) visit(value);
  };
  visit(plan);
  return found;
}

describe('owner lookups use an index', () => {
  const cases: Array<[string, (p: DatabasePool) => Promise<unknown>, string]> = [
    ["an invoice poll reads the invoice's latest deposit", (p) => findInvoiceView(p, 'pl_4242'), 'chain_deposits'],
    ['the evidence check of a deposit reported to a link', (p) => findLinkDeposit(p, 'pl_4243', 'USDT_BSC', 'tx4243', 0), 'chain_deposits'],
    ["the Solana watcher's last deposit per open owner", (p) => lastDeposits(p, 'USDT_SOL', 'test', [{ kind: 'payment_link', id: 'pl_4243', storeId: 'store' }]), 'chain_deposits'],
    ['a closing link stops being watched', (p) => stopWatchingOwner(p, 'pl_4243'), 'watched_addresses'],
  ];
  for (const [what, work, table] of cases) {
    it(what, async () => {
      const plans = await plansOf(work);
      expect(plans.flatMap(seqScannedTables)).not.toContain(table);
    });
  }
});
