import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'slonik';
import type { CreatedStore } from '../../db/store-repo.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * The payments export in flat memory (issue 32, docs/reports.md): counted payments seeded in SQL
 * (200,000 in `npm test`, which must stay short; REPORTS_EXPORT_ROWS=1000000 for the million of
 * the measurement in docs/benchmarks.md), exported as CSV over HTTP while this process (which runs
 * the API) is sampled.
 * The reply is read as it comes, never kept; the server reads keyset batches and writes each only
 * when the socket takes it, so its heap does not grow with the rows.
 */
const rows = Number(process.env.REPORTS_EXPORT_ROWS ?? 200_000);

/** A full collection on demand: what the heap holds, not the garbage it has yet to collect. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const links = 10_000;
let stack: Stack;
let store: CreatedStore;

beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Million');
  await stack.pool.query(sql.unsafe`
    INSERT INTO payment_links (id, store_id, environment, status, usdt_amount, enabled_rails, merchant_ref, expires_at, workflow_started)
    SELECT 'pl_m' || lpad(g::text, 20, '0'), ${store.clientId}, 'test', 'CONFIRMED', 10, '{USDT_BSC,MOBILE_MONEY}', 'order-' || g, now(), true
    FROM generate_series(1, ${links}) g`);
  await stack.pool.query(sql.unsafe`
    INSERT INTO link_payments (link_id, payment_key, rail, external_id, payer, amount_minor, decimals, state, disposition,
      counted_at, kes_value, kes_rate, kes_rate_source)
    SELECT 'pl_m' || lpad((1 + g % ${links})::text, 20, '0'), 'k' || g,
      CASE WHEN g % 2 = 0 THEN 'USDT_BSC' ELSE 'MOBILE_MONEY' END,
      CASE WHEN g % 2 = 0 THEN '0x' || md5(g::text) || md5(g::text) ELSE 'RKT' || g END,
      CASE WHEN g % 2 = 0 THEN '0x00000000000000000000000000000000000000aa' ELSE '254712345678' END,
      CASE WHEN g % 2 = 0 THEN 10000000000000000000 ELSE 1500 END,
      CASE WHEN g % 2 = 0 THEN 18 ELSE 0 END, 'confirmed', 'payment',
      '2026-10-01T00:00:00Z'::timestamptz + (g || ' seconds')::interval,
      CASE WHEN g % 2 = 0 THEN 1293.5 ELSE 1500 END, CASE WHEN g % 2 = 0 THEN 129.35 ELSE 1 END,
      CASE WHEN g % 2 = 0 THEN 'coingecko+coinbase' ELSE 'KES' END
    FROM generate_series(1, ${rows}) g`);
  await stack.pool.query(sql.unsafe`ANALYZE link_payments`);
  await stack.pool.query(sql.unsafe`ANALYZE payment_links`);
}, 600_000);
afterAll(async () => stack?.stop());

it(`exports ${rows.toLocaleString('en')} payments as CSV over HTTP in flat memory`, async () => {
  const mb = (n: number) => Math.round(n / 1024 / 1024);
  gc();
  const base = process.memoryUsage();
  const samples: { rss: number; heap: number; bytes: number }[] = [];
  let bytes = 0;
  let lines = 0;
  const started = Date.now();
  // Every two seconds: the process's RSS, and its heap after a full collection (what is retained).
  const timer = setInterval(() => {
    gc();
    const m = process.memoryUsage();
    samples.push({ rss: m.rss, heap: m.heapUsed, bytes });
  }, 2_000);
  const status = await new Promise<number>((resolve, reject) => {
    const url = new URL(`${stack.baseUrl}/v1/reports/payments?from=2026-10-01&to=2026-11-01&format=csv`);
    const req = httpRequest(url, { headers: { 'x-api-key': store.keys.test.secretKey }, agent: false }, (res) => {
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  clearInterval(timer);
  const seconds = (Date.now() - started) / 1000;
  expect(status).toBe(200);
  expect(lines).toBe(rows + 1);
  const peakRss = Math.max(...samples.map((s) => s.rss));
  const peakHeap = Math.max(...samples.map((s) => s.heap));
  // Heap in the first and the last quarter of the export: flat, not growing with the rows sent.
  const q = Math.max(1, Math.floor(samples.length / 4));
  const firstQuarter = Math.max(...samples.slice(0, q).map((s) => s.heap));
  const lastQuarter = Math.max(...samples.slice(-q).map((s) => s.heap));
  console.log(
    `reports export: ${rows} rows, ${mb(bytes)} MB of CSV in ${seconds.toFixed(1)} s; ` +
      `RSS ${mb(base.rss)} MB before, peak ${mb(peakRss)} MB (+${mb(peakRss - base.rss)}); ` +
      `heap (after a full GC) ${mb(base.heapUsed)} MB before, peak ${mb(peakHeap)} MB (+${mb(peakHeap - base.heapUsed)}); ` +
      `heap peak in the first quarter ${mb(firstQuarter)} MB, in the last ${mb(lastQuarter)} MB; ${samples.length} samples`,
  );
  // The CSV is some 200 MB; the process retains a few batches of it at most.
  expect(bytes).toBeGreaterThan(rows * 190);
  expect(peakHeap - base.heapUsed).toBeLessThan(64 * 1024 * 1024);
  expect(peakRss - base.rss).toBeLessThan(200 * 1024 * 1024);
  expect(lastQuarter).toBeLessThan(firstQuarter + 16 * 1024 * 1024);
}, 600_000);
