import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { sql } from 'slonik';
import { createLinkActivities } from '../../activities/links/index.js';
import type { CreatedStore } from '../../db/store-repo.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import { RateService } from '../../services/rates/rate-service.js';
import { axeViolations, desktop, freePort, launchBrowser } from '../helpers/browser.js';
import { dashboardUser, signInPage, type DashboardUser } from '../helpers/dashboard-users.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { parseCsv } from '../helpers/csv.js';

/**
 * The dashboard's Reports page in Chromium (docs/reports.md): pick a period, read the totals per
 * rail and currency, download the CSV, and find the totals equal to the sums of its rows. The
 * payments are counted through the activities the workflows call, at a fixed test rate, and their
 * count times pinned to 1 and 2 November 2026.
 */
let stack: Stack;
let browser: Browser;
let store: CreatedStore;
let viewer: DashboardUser;
const complaints: string[] = [];

const bsc = (n: number, micro: bigint): PaymentReport => ({
  rail: 'USDT_BSC', key: `0x${n.toString(16).padStart(64, '0')}:0`, externalId: `0x${n.toString(16).padStart(64, '0')}`,
  payer: '0x00000000000000000000000000000000000000aa', amountMinor: String(micro * 10n ** 12n), decimals: 18, blockNumber: n,
});
const mpesa = (k: string, kes: number): PaymentReport => ({ rail: 'MOBILE_MONEY', key: k, externalId: `RKT${k}`, payer: '254712345678', amountMinor: String(kes), decimals: 0 });

beforeAll(async () => {
  const port = await freePort();
  stack = await startStack({ PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  browser = await launchBrowser();
  store = await stack.createStore('Reports Duka');
  viewer = await dashboardUser(stack, store, 'developer');
  const act = createLinkActivities({ pool: stack.pool, config: stack.config, rates: new RateService({ testKesPerUsdt: '129.35', sources: [] }) });
  const payments: [string, PaymentReport, 'payment' | 'underpaid' | 'after_cancel'][] = [
    ['pl_reports0000000000000001', mpesa('a1', 1500), 'payment'],
    ['pl_reports0000000000000002', bsc(2, 10_000_000n), 'payment'],
    ['pl_reports0000000000000003', bsc(3, 2_500_000n), 'underpaid'],
    ['pl_reports0000000000000004', mpesa('a4', 259), 'after_cancel'],
    ['pl_reports0000000000000005', bsc(5, 1_000_000n), 'payment'],
  ];
  for (const [id, report, disposition] of payments) {
    await stack.pool.query(sql.unsafe`
      INSERT INTO payment_links (id, store_id, environment, status, usdt_amount, mobile_money_amount, enabled_rails, merchant_ref, expires_at, workflow_started)
      VALUES (${id}, ${store.clientId}, 'test', 'CONFIRMED', 10, 1500, '{MOBILE_MONEY,USDT_BSC}', ${`ref, "${id.slice(-1)}"`}, now(), true)`);
    await act.recordPayment({ linkId: id, report, state: 'confirmed', disposition });
  }
  // Four on 1 November, the last on 2 November (outside a one-day period).
  await stack.pool.query(sql.unsafe`
    UPDATE link_payments SET counted_at = CASE WHEN link_id LIKE '%5' THEN '2026-11-02T10:00:00Z'::timestamptz
      ELSE '2026-11-01T09:00:00Z'::timestamptz + (right(link_id, 1) || ' minutes')::interval END
    WHERE link_id LIKE 'pl_reports%'`);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function signedIn(user: DashboardUser): Promise<Page> {
  const context = await browser.newContext({ ...desktop, acceptDownloads: true, bypassCSP: true });
  const page = await context.newPage();
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && complaints.push(m.text()));
  page.on('pageerror', (e) => complaints.push(e.message));
  await signInPage(page, stack.baseUrl, user);
  return page;
}

describe('the Reports page', () => {
  it('picks a period, shows totals per rail and currency, and downloads a CSV whose rows sum to them', async () => {
    const page = await signedIn(viewer);
    await page.click('nav[aria-label="Sections"] a[href="/dashboard/reports"]');
    await page.waitForURL(`${stack.baseUrl}/dashboard/reports`);
    await page.fill('#from', '2026-11-01');
    await page.fill('#to', '2026-11-01');
    await page.click('form[data-testid="report-period"] button[type="submit"]');
    await page.waitForURL(/from=2026-11-01&to=2026-11-01/);

    const totals = await page.$$eval('[data-testid="report-totals"] tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    expect(totals).toEqual([
      ['MOBILE_MONEY', 'KES', '2', '1759 KES', '1759'],
      // 10 × 129.35 = 1293.5 → 1294, 2.5 × 129.35 = 323.375 → 323.
      ['USDT_BSC', 'USDT', '2', '12.5 USDT', '1617'],
    ]);
    expect(await page.textContent('[data-testid="all-kes"]')).toBe('KES 3376');
    const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious).toEqual([]);

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="report-download"]')]);
    expect(download.suggestedFilename()).toBe('payments-test-2026-11-01-2026-11-01.csv');
    const csv = parseCsv((await readFile((await download.path())!, 'utf8')).replace(/^\uFEFF/, ''));
    const [head, ...rows] = csv;
    expect(rows).toHaveLength(4);
    const col = (n: string) => head!.indexOf(n);
    for (const [rail, , count, , kes] of totals) {
      const mine = rows.filter((r) => r[col('rail')] === rail);
      expect([mine.length, mine.reduce((s, r) => s + BigInt(r[col('kes_value')]!), 0n)]).toEqual([Number(count), BigInt(kes!)]);
    }
    expect(rows.map((r) => r[col('merchant_ref')])).toEqual(['ref, "1"', 'ref, "2"', 'ref, "3"', 'ref, "4"']);

    // A wider period takes in the payment of 2 November.
    await page.goto(`${stack.baseUrl}/dashboard/reports?from=2026-11-01&to=2026-11-02`);
    expect(await page.textContent('[data-testid="all-payments"]')).toBe('5');
    // A period with nothing, and one that is not a period.
    await page.goto(`${stack.baseUrl}/dashboard/reports?from=2026-12-01&to=2026-12-31`);
    expect(await page.isVisible('[data-testid="report-empty"]')).toBe(true);
    const bad = await page.goto(`${stack.baseUrl}/dashboard/reports?from=2026-11-02&to=2026-11-01`);
    expect(bad?.status()).toBe(400);
    expect(complaints).toEqual([]);
    await page.context().close();
  });

  it('is for signed-in people only', async () => {
    const context = await browser.newContext(desktop);
    const page = await context.newPage();
    await page.goto(`${stack.baseUrl}/dashboard/reports/payments.csv?from=2026-11-01&to=2026-11-01`);
    expect(page.url()).toBe(`${stack.baseUrl}/dashboard/login`);
    await context.close();
  });
});
