import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, writeFile } from 'node:fs/promises';
import { sql } from 'slonik';
import { z } from 'zod';
import { createLinkActivities } from '../../activities/links/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import { RateService } from '../../services/rates/rate-service.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { parseCsv } from '../helpers/csv.js';

/**
 * The books (issue 32, docs/reports.md): every payment counted records its KES value then, with
 * the rate and its sources, once; the export lists every payment of the period, on both rails,
 * on time, under, over, late, after a cancel and as a duplicate, for links and invoices, and is
 * compared with a golden CSV; its totals equal the rows.
 *
 * The fixture's links are inserted as rows (their workflows are not the subject) and their
 * payments counted through the very activities the workflows call (`recordPayment`,
 * `confirmLink`), with a rates service at a fixed test rate. The times they were counted are
 * then pinned so the golden file is stable.
 */
let stack: Stack;
let store: CreatedStore;
let other: CreatedStore;
let key: string;
const golden = new URL('../fixtures/reports/payments.csv', import.meta.url);

beforeAll(async () => {
  stack = await startStack();
  store = await stack.createStore('Books');
  other = await stack.createStore('Other books');
  key = store.keys.test.secretKey;
});
afterAll(async () => stack?.stop());

const rates = new RateService({ testKesPerUsdt: '129.35', sources: [] });
const phone = '254712345678';
const addr = '0x00000000000000000000000000000000000000aa';
const usdt18 = (micro: bigint) => String(micro * 10n ** 12n);

async function insertLink(id: string, o: { storeId?: string; rails: string[]; usdt: string; kes?: number; ref: string | null; kind?: 'payment_link' | 'invoice' }) {
  await stack.pool.query(sql.unsafe`
    INSERT INTO payment_links (id, store_id, environment, status, usdt_amount, mobile_money_amount, enabled_rails, merchant_ref, expires_at, workflow_started, kind)
    VALUES (${id}, ${o.storeId ?? store.clientId}, 'test', 'PENDING', ${o.usdt}, ${o.kes ?? null}, ${sql.array(o.rails, 'text')}, ${o.ref},
      now() + interval '1 day', true, ${o.kind ?? 'payment_link'})`);
}
const setStatus = (id: string, status: string) => stack.pool.query(sql.unsafe`UPDATE payment_links SET status = ${status} WHERE id = ${id}`);

const mpesa = (k: string, kes: number, receipt: string): PaymentReport => ({ rail: 'MOBILE_MONEY', key: k, externalId: receipt, payer: phone, amountMinor: String(kes), decimals: 0 });
const bsc = (n: number, micro: bigint): PaymentReport => ({ rail: 'USDT_BSC', key: `0x${n.toString(16).padStart(64, '0')}:0`, externalId: `0x${n.toString(16).padStart(64, '0')}`, payer: addr, amountMinor: usdt18(micro), decimals: 18, blockNumber: n });
const tron = (n: number, micro: bigint): PaymentReport => ({ rail: 'USDT_TRON', key: `${n.toString(16).padStart(64, '0')}:0`, externalId: n.toString(16).padStart(64, '0'), payer: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', amountMinor: String(micro), decimals: 6, blockNumber: n });

const id = (n: number) => `pl_books${String(n).padStart(16, '0')}`;

async function seedFixture() {
  const act = createLinkActivities({ pool: stack.pool, config: stack.config, rates });
  const noRates = createLinkActivities({ pool: stack.pool, config: stack.config });
  const confirm = (linkId: string, report: PaymentReport, disposition: 'payment' | 'overpaid' | 'late', micro: string) =>
    act.confirmLink({ linkId, report, from: ['PENDING', 'PROCESSING', 'EXPIRED'], disposition, receivedMicro: micro, confirmedAt: new Date().toISOString() });
  // 1. M-Pesa, on time; a reference with a comma, quotes and a newline.
  await insertLink(id(1), { rails: ['MOBILE_MONEY', 'USDT_BSC'], usdt: '11.6', kes: 1500, ref: 'ORDER 1, "blue"\nsecond line' });
  await act.recordPayment({ linkId: id(1), report: mpesa('ws_CO_1', 1500, 'RKT1AB2CD3'), state: 'initiated', disposition: null });
  await confirm(id(1), mpesa('ws_CO_1', 1500, 'RKT1AB2CD3'), 'payment', '0');
  // 2. BSC, on time; a reference that a spreadsheet would run as a formula.
  await insertLink(id(2), { rails: ['USDT_BSC'], usdt: '10', ref: '=HYPERLINK("http://evil.example","x")' });
  await confirm(id(2), bsc(2, 10_000_000n), 'payment', '10000000');
  // 3. BSC, under: 3 of 10, the link stays open then expires.
  await insertLink(id(3), { rails: ['USDT_BSC'], usdt: '10', ref: '+254700000000' });
  await act.recordPayment({ linkId: id(3), report: bsc(3, 3_000_000n), state: 'confirmed', disposition: 'underpaid', receivedMicro: '3000000' });
  await setStatus(id(3), 'EXPIRED');
  // 4. TRON, over: 12.345678 of 10.
  await insertLink(id(4), { rails: ['USDT_TRON'], usdt: '10', ref: '@import' });
  await confirm(id(4), tron(4, 12_345_678n), 'overpaid', '12345678');
  // 5. BSC, late: the link had expired.
  await insertLink(id(5), { rails: ['USDT_BSC'], usdt: '5', ref: '-5' });
  await setStatus(id(5), 'EXPIRED');
  await confirm(id(5), bsc(5, 5_000_000n), 'late', '5000000');
  // 6. M-Pesa, late.
  await insertLink(id(6), { rails: ['MOBILE_MONEY'], usdt: '3.87', kes: 500, ref: 'late-kes' });
  await setStatus(id(6), 'EXPIRED');
  await confirm(id(6), mpesa('ws_CO_6', 500, 'RKT6LATE00'), 'late', '0');
  // 7. After a cancel, on both rails.
  await insertLink(id(7), { rails: ['MOBILE_MONEY', 'USDT_BSC'], usdt: '2', kes: 259, ref: 'cancelled' });
  await setStatus(id(7), 'CANCELLED');
  await act.recordPayment({ linkId: id(7), report: mpesa('ws_CO_7', 259, 'RKT7CANCEL'), state: 'confirmed', disposition: 'after_cancel' });
  await act.recordPayment({ linkId: id(7), report: bsc(7, 2_000_000n), state: 'confirmed', disposition: 'after_cancel' });
  // 8. A duplicate on a confirmed link: a second M-Pesa payment.
  await insertLink(id(8), { rails: ['MOBILE_MONEY'], usdt: '1', kes: 130, ref: null });
  await confirm(id(8), mpesa('ws_CO_8a', 130, 'RKT8FIRST0'), 'payment', '0');
  await act.recordPayment({ linkId: id(8), report: mpesa('ws_CO_8b', 130, 'RKT8AGAIN0'), state: 'confirmed', disposition: 'duplicate' });
  // 9. An invoice paid on TRON, exactly half a shilling over an even number: 30 USDT × 129.35 = 3880.5 → 3880
  //    (link 2's 1293.5 goes up to 1294: half to even). Then a KES value with no rate at count time (a worker
  //    without a rates service): counted all the same, with the reason.
  await insertLink(id(9), { rails: ['USDT_TRON'], usdt: '30', ref: 'INV-9', kind: 'invoice' });
  await confirm(id(9), tron(9, 30_000_000n), 'payment', '30000000');
  await insertLink(id(10), { rails: ['USDT_BSC'], usdt: '1', ref: 'no-rate' });
  await noRates.confirmLink({ linkId: id(10), report: bsc(10, 1_000_000n), from: ['PENDING'], disposition: 'payment', receivedMicro: '1000000', confirmedAt: new Date().toISOString() });
  // Another store's payment, and a payment only seen (not counted): never in this store's books.
  await insertLink(id(11), { storeId: other.clientId, rails: ['USDT_BSC'], usdt: '1', ref: 'other' });
  await act.recordPayment({ linkId: id(11), report: bsc(11, 1_000_000n), state: 'confirmed', disposition: 'underpaid' });
  await insertLink(id(12), { rails: ['USDT_BSC'], usdt: '1', ref: 'seen-only' });
  await act.recordPayment({ linkId: id(12), report: bsc(12, 1_000_000n), state: 'seen', disposition: null });

  // Pinned count times, one minute apart in the order counted, on 1 November 2026 (UTC).
  await stack.pool.query(sql.unsafe`
    UPDATE link_payments p SET counted_at = '2026-11-01T08:00:00Z'::timestamptz + (o.n || ' minutes')::interval
    FROM (SELECT link_id, payment_key, row_number() OVER (ORDER BY counted_at, link_id, payment_key) AS n FROM link_payments
          WHERE counted_at IS NOT NULL AND link_id LIKE 'pl_books%') o
    WHERE p.link_id = o.link_id AND p.payment_key = o.payment_key`);
  return act;
}

const kesRow = z.object({ kes_value: z.string().nullable(), kes_rate: z.string().nullable(), kes_rate_source: z.string().nullable(), kes_missing_reason: z.string().nullable(), counted_at: z.string().nullable() });
const kesOf = (linkId: string) => stack.pool.any(sql.type(kesRow)`
  SELECT kes_value::text, kes_rate::text, kes_rate_source, kes_missing_reason, counted_at::text FROM link_payments WHERE link_id = ${linkId} ORDER BY payment_key`);
const report = (query: string, k = key) => stack.request({ method: 'GET', url: `/v1/reports/payments?${query}`, key: k });

describe('the books', () => {
  let act: Awaited<ReturnType<typeof seedFixture>>;
  beforeAll(async () => {
    act = await seedFixture();
  });

  it('records each counted payment’s KES value with its rate and sources, once: a retried count changes nothing', async () => {
    expect(await kesOf(id(1))).toEqual([expect.objectContaining({ kes_value: '1500', kes_rate: '1', kes_rate_source: 'KES', kes_missing_reason: null })]);
    expect(await kesOf(id(4))).toEqual([expect.objectContaining({ kes_value: '1596.9134493', kes_rate: '129.35', kes_rate_source: 'fixed-test-rate' })]);
    expect(await kesOf(id(10))).toEqual([expect.objectContaining({ kes_value: null, kes_rate: null, kes_missing_reason: 'no rates service in this worker' })]);
    expect(await kesOf(id(12))).toEqual([expect.objectContaining({ kes_value: null, counted_at: null, kes_missing_reason: null })]);
    // The same count again (an activity retry), now with another rate: nothing recorded moves.
    const before = await kesOf(id(2));
    const retry = createLinkActivities({ pool: stack.pool, config: stack.config, rates: new RateService({ testKesPerUsdt: '200', sources: [] }) });
    await retry.confirmLink({ linkId: id(2), report: bsc(2, 10_000_000n), from: ['PENDING'], disposition: 'payment', receivedMicro: '10000000', confirmedAt: new Date().toISOString() });
    await retry.recordPayment({ linkId: id(2), report: bsc(2, 10_000_000n), state: 'confirmed', disposition: 'payment' });
    expect(await kesOf(id(2))).toEqual(before);
    expect(before[0]).toMatchObject({ kes_value: '1293.5', kes_rate: '129.35' });
    void act;
  });

  it('exports the period as the golden CSV: every kind of payment on both rails, links and invoices, quoted and neutralised', async () => {
    const res = await report('from=2026-11-01&to=2026-11-02&format=csv');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="payments-test-2026-11-01-2026-11-02.csv"');
    if (process.env.UPDATE_GOLDEN === '1') await writeFile(golden, res.text);
    expect(res.text).toBe(await readFile(golden, 'utf8'));
    const rows = parseCsv(res.text.replace(/^\uFEFF/, ''));
    expect(rows).toHaveLength(1 + 12);
    expect(new Set(rows.map((r) => r.length))).toEqual(new Set([16]));
    const kinds = rows.slice(1).map((r) => `${r[4]}:${r[14]}`);
    for (const k of ['MOBILE_MONEY:on_time', 'USDT_BSC:on_time', 'USDT_BSC:under', 'USDT_TRON:over', 'USDT_BSC:late', 'MOBILE_MONEY:late', 'MOBILE_MONEY:after_cancel', 'USDT_BSC:after_cancel', 'MOBILE_MONEY:duplicate']) {
      expect(kinds).toContain(k);
    }
    // Nothing of the other store, nothing only seen.
    expect(res.text).not.toContain(id(11));
    expect(res.text).not.toContain(id(12));
  });

  it('has totals per rail and currency equal to the sum of the rows', async () => {
    const csv = parseCsv((await report('from=2026-11-01&to=2026-11-02')).text.replace(/^\uFEFF/, ''));
    const [head, ...rows] = csv;
    const col = (name: string) => head!.indexOf(name);
    const sums = new Map<string, { payments: number; kes: bigint; without: number; amount: string[] }>();
    for (const r of rows) {
      const k = `${r[col('rail')]}/${r[col('currency')]}`;
      const s = sums.get(k) ?? { payments: 0, kes: 0n, without: 0, amount: [] };
      s.payments++;
      if (r[col('kes_value')]) s.kes += BigInt(r[col('kes_value')]!); else s.without++;
      s.amount.push(r[col('amount')]!);
      sums.set(k, s);
    }
    const totals = await stack.request({ method: 'GET', url: '/v1/reports/payments/totals?from=2026-11-01&to=2026-11-02', key });
    expect(totals.status).toBe(200);
    const data = totals.body.data as { rail: string; currency: string; payments: number; amount: string; kesValue: string; withoutKesValue: number }[];
    expect(data.map((t) => `${t.rail}/${t.currency}`).sort()).toEqual([...sums.keys()].sort());
    for (const t of data) {
      const s = sums.get(`${t.rail}/${t.currency}`)!;
      expect([t.payments, t.kesValue, t.withoutKesValue]).toEqual([s.payments, String(s.kes), s.without]);
      // Amounts: exact decimal sums of the rows.
      const scale = 18;
      const toUnits = (v: string) => { const [w, f = ''] = v.split('.'); return BigInt(w! + f.padEnd(scale, '0')); };
      expect(toUnits(t.amount)).toBe(s.amount.reduce((a, v) => a + toUnits(v), 0n));
    }
    expect(data.find((t) => t.rail === 'MOBILE_MONEY')).toMatchObject({ currency: 'KES', payments: 5, amount: '2519', kesValue: '2519' });
  });

  it('serves the same rows as JSON', async () => {
    const res = await report('from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&format=json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body.from).toBe('2026-11-01T00:00:00.000Z');
    expect(res.body.data).toHaveLength(12);
    expect(res.body.data[0]).toMatchObject({ linkId: id(1), rail: 'MOBILE_MONEY', amount: '1500', currency: 'KES', kesValue: '1500', kesRate: '1', kesRateSources: 'KES', payer: '2547•••••678', reference: 'RKT1AB2CD3', paymentKind: 'on_time', linkStatus: 'CONFIRMED', type: 'payment_link' });
  });

  it('keeps to the period and the key’s environment', async () => {
    expect((await report('from=2026-11-01T08:00:00Z&to=2026-11-01T08:03:00Z&format=json')).body.data).toHaveLength(2);
    expect((await report('from=2026-11-02&to=2026-11-03&format=json')).body.data).toEqual([]);
    expect((await report('from=2026-11-01&to=2026-11-02&format=json', store.keys.live.secretKey)).body.data).toEqual([]);
  });

  it('refuses a bad period with the documented error and needs a secret key', async () => {
    for (const [q, param] of [['from=yesterday&to=2026-11-02', 'from'], ['from=2026-11-01', 'to'], ['from=2026-11-02&to=2026-11-01', 'to'], ['from=2026-02-30&to=2026-11-01', 'from'], ['from=2026-11-01&to=2026-11-02&format=xlsx', 'format']] as const) {
      const res = await report(q);
      expect([q, res.status, res.body.error.type, res.body.error.param]).toEqual([q, 400, 'invalid_request_error', param]);
      expect(res.body.error.requestId).toEqual(expect.any(String));
    }
    expect((await report('from=2026-11-01&to=2026-11-02&extra=1')).body.error.code).toBe('unknown_field');
    expect((await report('from=2026-11-01&to=2026-11-02', '')).status).toBe(401);
    expect((await report('from=2026-11-01&to=2026-11-02', store.keys.test.publishableKey)).status).toBe(403);
  });
});
