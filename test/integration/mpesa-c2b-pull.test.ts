import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sql } from 'slonik';
import { z } from 'zod';
import type { CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { mpesaPullWorkflowId } from '../../domain/workflow-contract.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { pullC2bPayments } from '../../services/mpesa/c2b-pull.js';
import { reportUnverifiedC2bPayments } from '../../services/mpesa/c2b-unverified.js';
import { ensureMpesaPullWorkflow, targetOf } from '../../temporal-client/index.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { connectMobileMoney } from '../../services/mpesa/connect.js';
import { mobileMoneyLinks } from '../helpers/mobile-money-links.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoPayPaybill } from '../../demo/pay.js';
import { writeDemoState } from '../../demo/state.js';

/**
 * Backfill by Pull Transactions, on real parts: the Daraja emulator (which lists every C2B payment
 * it made, confirmation delivered or dropped, within 48 hours, paged by OffSetValue), PostgreSQL
 * and the links' workflows on the Temporal dev server.
 */
const merchant = sandboxPaybill('c2b-pull');
const nominated = '254708374149';
let daraja: DarajaEmulator;
let stack: Stack;
let store: CreatedStore;
let key: string;
let phoneSeq = 700;
const nextPhone = () => `2547${String(++phoneSeq).padStart(8, '0')}`;

beforeAll(async () => {
  // Two records a page: every pull below reads several pages.
  // The demo's app too (npm run demo:pay -- --paybill authenticates as it).
  daraja = await startDarajaEmulator({ merchants: [merchant, sandboxPaybill('demo')], deliverVia: (u) => new URL(u.pathname, stack.baseUrl), pullPageSize: 2 });
  stack = await startStack({ MPESA_SANDBOX_URL: daraja.url, ENCRYPTION_KEY: formatKeyEntry(generateKey()), MPESA_QUERY_AFTER_SECONDS: '1' });
  store = await stack.createStore('Pull');
  key = store.keys.test.secretKey;
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await daraja?.close();
});

const who = () => ({ storeId: store.clientId, environment: 'test' as const });
const links = mobileMoneyLinks(() => ({ stack, storeId: store.clientId, key }));
const connect = (extra: Record<string, unknown> = {}) => links.connect(merchant, extra);
const { newLink, getLink, statusIs } = links;
const pay = (billRef: string, amount: number, extra: { transId?: string; paidAt?: Date } = {}) =>
  daraja.c2bPay({ ShortCode: merchant.shortCode, CommandID: 'CustomerPayBillOnline', Amount: amount, Msisdn: nextPhone(), BillRefNumber: billRef, ...extra });
const pull = () => pullC2bPayments({ pool: stack.pool, temporal: stack.temporal, config: stack.config }, who());
const rows = (transId: string) => stack.pool.any(sql.type(z.object({ state: z.string(), amount: z.string(), link_id: z.string().nullable(), source: z.string(), pulled: z.boolean() }))`
  SELECT state, amount::text, link_id, source, pulled_at IS NOT NULL AS pulled FROM mpesa_c2b_payments WHERE trans_id = ${transId}`);
const confirmDirect = (body: Record<string, string>) => {
  const confirmation = daraja.c2bRegistrations.get(merchant.shortCode)!.confirmationUrl;
  return stack.request({ method: 'POST', url: new URL(confirmation).pathname, payload: { TransactionType: 'Pay Bill', BusinessShortCode: merchant.shortCode, MSISDN: '25470****149', FirstName: 'John', ...body } });
};
/** Every payload of a history, decoded (payloads are bytes in the history). */
const payloadText = (value: unknown): string => {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(payloadText).join(' ');
  if (value && typeof value === 'object') return Object.values(value).map(payloadText).join(' ');
  return String(value ?? '');
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('registering Pull Transactions', () => {
  it('connect registers the shortcode with the nominated number; without one the store is not pulled', async () => {
    const plain = await connect();
    expect(plain.body.pullRegistration).toBeNull();
    expect(await pull()).toMatchObject({ pulled: 0, problem: 'not registered for Pull Transactions' });

    const res = await connect({ c2bPullNominatedNumber: nominated, c2bUnallocatedAllowed: true });
    expect(res.status).toBe(200);
    expect(res.body.pullRegistration).toEqual({ registered: true, error: null });
    expect(daraja.pullRegistrations.get(merchant.shortCode)).toEqual({
      shortCode: merchant.shortCode, nominatedNumber: nominated, callbackUrl: 'http://malipo.test/v1/callbacks/c2b/pull-notices',
    });
    const bad = await connect({ c2bPullNominatedNumber: '0700' });
    expect(bad.status).toBe(400);
  });
});

describe('the pull', () => {
  it('finds a dropped confirmation and confirms its link; a second pull counts nothing twice', async () => {
    const link = await newLink(60);
    daraja.c2bScript({ confirmation: 'none' });
    const dropped = await pay(link.mobileMoneyAccountRef, 60);
    daraja.c2bScript({ confirmation: 'once' });
    expect(dropped.deliveries).toEqual([]);
    expect(await rows(dropped.transId)).toEqual([]);

    const first = await pull();
    expect(first).toMatchObject({ problem: null, backfilled: 1 });
    expect(await rows(dropped.transId)).toEqual([{ state: 'matched', amount: '60.00', link_id: link.id, source: 'pull', pulled: true }]);
    const confirmed = await eventually(statusIs(link.id, 'CONFIRMED'), 'the pulled payment to confirm the link');
    expect(confirmed).toMatchObject({ confirmedRail: 'MOBILE_MONEY', externalId: dropped.transId, mobileMoneyAmountDue: 0 });

    const again = await pull();
    expect(again).toMatchObject({ problem: null, backfilled: 0, corroborated: 0, disputed: 0 });
    expect(again.pulled).toBeGreaterThanOrEqual(1);
    // The late confirmation of the same payment counts once too.
    expect((await confirmDirect(dropped.confirmation)).status).toBe(200);
    await pause(1_000);
    expect(await rows(dropped.transId)).toHaveLength(1);
    expect((await getLink(link.id)).payments).toHaveLength(1);
  });

  it('a pulled payment naming no link is kept unallocated and reported as a reconciliation finding (once)', async () => {
    daraja.c2bScript({ confirmation: 'none' });
    const stray = await pay('NOSUCHREF', 35);
    daraja.c2bScript({ confirmation: 'once' });
    expect(stray.outcome).toBe('completed');
    const summary = await pull();
    expect(summary).toMatchObject({ problem: null, unmatched: 1 });
    expect(await rows(stray.transId)).toEqual([{ state: 'unallocated', amount: '35.00', link_id: null, source: 'pull', pulled: true }]);
    expect(await pull()).toMatchObject({ unmatched: 0 });
    const findings = await stack.request({ method: 'GET', url: '/v1/reconciliation/findings', key });
    expect(findings.status).toBe(200);
    const mine = findings.body.data.filter((f: { address: string }) => f.address === `${merchant.shortCode}:${stray.transId}`);
    expect(mine).toEqual([expect.objectContaining({ kind: 'unmatched_payment', status: 'noted', difference: '35', owner: { type: 'payment_link', id: null, index: null } })]);
    const events = await stack.pool.anyFirst(sql.type(z.object({ k: z.string() }))`
      SELECT dedupe_key AS k FROM events WHERE type = 'mobile_money.unallocated' AND dedupe_key LIKE ${`%${stray.transId}`}`);
    expect(events).toHaveLength(1);
  });

  it('reaches back 48 hours at most: an older payment is not listed', async () => {
    const link = await newLink(25);
    daraja.c2bScript({ confirmation: 'none' });
    const old = await pay(link.mobileMoneyAccountRef, 25, { paidAt: new Date(Date.now() - 49 * 3600_000) });
    daraja.c2bScript({ confirmation: 'once' });
    await stack.pool.query(sql.unsafe`UPDATE mobile_money_connections SET c2b_pulled_at = NULL WHERE store_id = ${store.clientId}`);
    expect(await pull()).toMatchObject({ problem: null, backfilled: 0 });
    expect(await rows(old.transId)).toEqual([]);
    const last = daraja.requests.filter((r) => r.path === '/pulltransactions/v1/query').at(-1);
    expect(last?.status).toBe(200);
  });
});

describe('when confirmations do not settle alone (c2bSettlesAlone: false)', () => {
  beforeAll(async () => {
    expect((await connect({ c2bPullNominatedNumber: nominated, c2bSettlesAlone: false })).body.pullRegistration).toEqual({ registered: true, error: null });
  });

  it('a confirmation waits until the pull corroborates it, then the link confirms', async () => {
    const link = await newLink(80);
    const p = await pay(link.mobileMoneyAccountRef, 80);
    expect(p.deliveries.map((d) => d.status)).toEqual([200]);
    expect(await rows(p.transId)).toEqual([{ state: 'awaiting_evidence', amount: '80.00', link_id: link.id, source: 'confirmation', pulled: false }]);
    await pause(1_500);
    expect((await getLink(link.id)).status).toBe('PENDING');

    expect(await pull()).toMatchObject({ problem: null, corroborated: 1 });
    expect(await rows(p.transId)).toEqual([{ state: 'matched', amount: '80.00', link_id: link.id, source: 'confirmation', pulled: true }]);
    const confirmed = await eventually(statusIs(link.id, 'CONFIRMED'), 'the corroborated payment to confirm the link');
    expect(confirmed.externalId).toBe(p.transId);
    expect(await pull()).toMatchObject({ corroborated: 0 });
    expect((await getLink(link.id)).payments).toHaveLength(1);
  });

  it('an altered confirmation (its amount is not what M-Pesa lists) is not settled and is recorded', async () => {
    const link = await newLink(500);
    daraja.c2bScript({ confirmation: 'none' });
    const genuine = await pay(link.mobileMoneyAccountRef, 5);
    daraja.c2bScript({ confirmation: 'once' });
    // Someone who knows the URL posts the payment with a larger amount before M-Pesa's listing is read.
    expect((await confirmDirect({ ...genuine.confirmation, TransAmount: '500.00' })).status).toBe(200);
    expect(await rows(genuine.transId)).toEqual([{ state: 'awaiting_evidence', amount: '500.00', link_id: link.id, source: 'confirmation', pulled: false }]);

    expect(await pull()).toMatchObject({ problem: null, disputed: 1, corroborated: 0 });
    expect(await rows(genuine.transId)).toEqual([{ state: 'disputed', amount: '500.00', link_id: link.id, source: 'confirmation', pulled: true }]);
    const suspicious = await stack.pool.any(sql.type(z.object({ kind: z.string(), reason: z.string() }))`
      SELECT kind, reason FROM mpesa_c2b_suspicious_posts WHERE trans_id = ${genuine.transId}`);
    expect(suspicious).toEqual([{ kind: 'pull_mismatch', reason: expect.stringContaining('amount 500.00') }]);
    await pause(1_500);
    const l = await getLink(link.id);
    expect(l).toMatchObject({ status: 'PENDING' });
    expect(l.payments).toEqual([]);
    expect(await pull()).toMatchObject({ disputed: 0 });
    expect(await stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM mpesa_c2b_suspicious_posts WHERE trans_id = ${genuine.transId}`)).toBe(1);
  });
});

describe('a waiting confirmation that no pull can corroborate', () => {
  const findingsAt = async (k: string, address: string) =>
    (await stack.request({ method: 'GET', url: '/v1/reconciliation/findings?limit=100', key: k })).body.data.filter((f: { address: string }) => f.address === address);

  it('is reported once as an unverified_payment finding when older than the pull reaches back; a recent one is not', async () => {
    expect((await connect({ c2bPullNominatedNumber: nominated, c2bSettlesAlone: false })).status).toBe(200);
    const link = await newLink(91);
    const recent = await pay(link.mobileMoneyAccountRef, 41);
    const old = await pay(link.mobileMoneyAccountRef, 42);
    expect((await rows(old.transId))[0]).toMatchObject({ state: 'awaiting_evidence', link_id: link.id });
    // As if it had waited since two days ago (the pull reaches back 48 hours).
    await stack.pool.query(sql.unsafe`UPDATE mpesa_c2b_payments SET received_at = now() - interval '49 hours' WHERE trans_id = ${old.transId}`);

    expect(await reportUnverifiedC2bPayments({ pool: stack.pool })).toBe(1);
    expect(await findingsAt(key, `${merchant.shortCode}:${old.transId}`)).toEqual([expect.objectContaining({
      kind: 'unverified_payment', status: 'noted', difference: '42', owner: { type: 'payment_link', id: link.id, index: null },
    })]);
    expect(await findingsAt(key, `${merchant.shortCode}:${recent.transId}`)).toEqual([]);
    // Once per payment.
    expect(await reportUnverifiedC2bPayments({ pool: stack.pool })).toBe(0);
    expect(await findingsAt(key, `${merchant.shortCode}:${old.transId}`)).toHaveLength(1);
  });

  it('is reported at once where the store is not registered for Pull Transactions', async () => {
    const other = sandboxPaybill('c2b-unpulled');
    const own = await startDarajaEmulator({ merchants: [other], deliverVia: (u) => new URL(u.pathname, stack.baseUrl) });
    try {
      const s = await stack.createStore('Not pulled');
      const k = s.keys.test.secretKey;
      const config = { ...stack.config, mpesa: { ...stack.config.mpesa, sandboxUrl: own.url } };
      const res = await connectMobileMoney({ pool: stack.pool, config }, { storeId: s.clientId, environment: 'test' }, { ...connectBody(other), c2bSettlesAlone: false } as never);
      expect(res).toMatchObject({ c2bRegistration: { registered: true }, pullRegistration: null });
      const created = await stack.request({ method: 'POST', url: '/v1/payment-links', key: k, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 73 } });
      const p = await own.c2bPay({ ShortCode: other.shortCode, CommandID: 'CustomerPayBillOnline', Amount: 73, Msisdn: nextPhone(), BillRefNumber: created.body.mobileMoneyAccountRef });
      expect((await rows(p.transId))[0]).toMatchObject({ state: 'awaiting_evidence', link_id: created.body.id });
      expect(await reportUnverifiedC2bPayments({ pool: stack.pool })).toBe(1);
      expect(await findingsAt(k, `${other.shortCode}:${p.transId}`)).toEqual([expect.objectContaining({
        kind: 'unverified_payment', status: 'noted', difference: '73', owner: { type: 'payment_link', id: created.body.id, index: null },
      })]);
      // Another store sees none of it.
      expect(await findingsAt(key, `${other.shortCode}:${p.transId}`)).toEqual([]);
    } finally {
      await own.close();
    }
  });
});

describe("Safaricom's notices about the Pull registration", () => {
  it('are acknowledged and kept as a bounded summary, changing nothing else', async () => {
    const notices = () => stack.pool.any(sql.type(z.object({ shortcode: z.string().nullable(), summary: z.record(z.string(), z.string()) }))`
      SELECT shortcode, summary FROM mpesa_pull_notices ORDER BY id`);
    const before = (await notices()).length;
    const notice = { ResponseRefID: 'ab12-3456', ResponseStatus: '1000', ShortCode: merchant.shortCode, ResponseDescription: 'ShortCode 174379 Registered Successfully' };
    const res = await stack.request({ method: 'POST', url: '/v1/callbacks/c2b/pull-notices', payload: notice });
    expect([res.status, res.body]).toEqual([200, { ResultCode: '0', ResultDesc: 'Accepted' }]);
    expect((await notices()).slice(before)).toEqual([{ shortcode: merchant.shortCode, summary: notice }]);

    // Anyone can post here: whatever comes is cut down (20 scalar fields, 200 characters each), never stored whole.
    const flood = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, 'x'.repeat(1_000)]));
    const big = await stack.request({ method: 'POST', url: '/v1/callbacks/c2b/pull-notices', payload: { nested: { deep: true }, ShortCode: 'not a code', ...flood } });
    expect(big.status).toBe(200);
    const kept = (await notices()).at(-1)!;
    expect(kept.shortcode).toBeNull();
    expect(Object.keys(kept.summary)).toHaveLength(19);
    expect(Object.values(kept.summary).every((v) => v.length <= 200)).toBe(true);
    expect(kept.summary.nested).toBeUndefined();
    const count = (await notices()).length;
    const odd = await stack.request({ method: 'POST', url: '/v1/callbacks/c2b/pull-notices', payload: ['not', 'an', 'object'] });
    expect(odd.status).toBe(400);
    expect(odd.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(await notices()).toHaveLength(count);
  });
});

describe('the scheduled pull', () => {
  it('runs as a workflow and backfills a dropped confirmation on its own', async () => {
    await connect({ c2bPullNominatedNumber: nominated, c2bSettlesAlone: true });
    const link = await newLink(15);
    daraja.c2bScript({ confirmation: 'none' });
    const dropped = await pay(link.mobileMoneyAccountRef, 15);
    daraja.c2bScript({ confirmation: 'once' });
    await ensureMpesaPullWorkflow(targetOf(stack), 1_000);
    try {
      await eventually(statusIs(link.id, 'CONFIRMED'), 'the scheduled pull to confirm the link');
      expect(await rows(dropped.transId)).toEqual([{ state: 'matched', amount: '15.00', link_id: link.id, source: 'pull', pulled: true }]);
      // Its history holds store ids and counts: no credentials, no payer data.
      const history = payloadText(await stack.temporal.workflow.getHandle(mpesaPullWorkflowId(stack.config.temporal.taskQueuePrefix)).fetchHistory());
      expect(history).toContain(store.clientId);
      expect(history).not.toContain(merchant.consumerSecret);
      expect(history).not.toContain(merchant.passkey);
      expect(history).not.toContain(dropped.transId);
    } finally {
      await stack.temporal.workflow.getHandle(mpesaPullWorkflowId(stack.config.temporal.taskQueuePrefix)).terminate('test over');
    }
  });
});

describe('the demo', () => {
  it('npm run demo:pay -- --paybill pays a link from the M-Pesa menu with its account reference', async () => {
    await connect();
    const link = await newLink(42);
    const dataDir = await mkdtemp(join(tmpdir(), 'malipo-demo-'));
    try {
      await writeDemoState(dataDir, { testKeys: store.keys.test, apiUrl: stack.baseUrl, darajaUrl: daraja.url });
      await demoPayPaybill(link.id, { dataDir });
      const paid = daraja.c2bPayments.at(-1)!;
      expect(paid).toMatchObject({ billRef: link.mobileMoneyAccountRef, amount: '42.00', outcome: 'completed' });
      expect(await getLink(link.id)).toMatchObject({ status: 'CONFIRMED', confirmedRail: 'MOBILE_MONEY', externalId: paid.transId });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
