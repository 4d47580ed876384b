import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { loadConfig } from '../../config/config.js';
import { openPool, type DatabasePool } from '../../db/pool.js';
import { createStore, type CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { randomToken } from '../../domain/ids.js';
import { startDarajaEmulator, type DarajaEmulator } from '../../emulators/daraja/server.js';
import { startServices, type Running } from '../../runtime/services.js';
import { createTestDatabase } from '../helpers/database.js';
import { sandboxPaybill } from '../helpers/daraja.js';
import { httpCall } from '../helpers/http.js';
import { labelValues, offendingLabels, sumOf, valueOf } from '../helpers/metrics.js';
import { freePort } from '../helpers/ports.js';
import { eventually } from '../helpers/wait.js';

/**
 * The service as `malipo start` runs it (runtime/services.ts: one process, API and worker), with
 * its three metrics endpoints on: the API's GET /metrics, the worker's own port and the Temporal
 * SDK's exporter. An M-Pesa payment goes through (the Daraja emulator), and each scrape must show it.
 */
const merchant = sandboxPaybill('metrics-svc');
const token = 'metrics-token-service-0123456789';
const phone = '254712345678';

let daraja: DarajaEmulator;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let running: Running;
let pool: DatabasePool;
let store: CreatedStore;
let apiUrl: string;
let workerMetricsUrl: string;
let temporalMetricsUrl: string;

beforeAll(async () => {
  const [port, workerPort, temporalPort] = [await freePort(), await freePort(), await freePort()];
  apiUrl = `http://127.0.0.1:${port}`;
  workerMetricsUrl = `http://127.0.0.1:${workerPort}`;
  temporalMetricsUrl = `http://127.0.0.1:${temporalPort}`;
  daraja = await startDarajaEmulator({ merchants: [merchant], deliverVia: (u) => new URL(u.pathname, apiUrl) });
  db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: process.env.MALIPO_TEST_TEMPORAL_ADDRESS!,
    TASK_QUEUE_PREFIX: `m${randomToken(8)}-`,
    PUBLIC_BASE_URL: 'http://malipo.test',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'silent',
    CHAIN_WATCHERS: 'off',
    METRICS_TOKEN: token,
    WORKER_METRICS_PORT: String(workerPort),
    TEMPORAL_METRICS_PORT: String(temporalPort),
    MPESA_SANDBOX_URL: daraja.url,
    ENCRYPTION_KEY: formatKeyEntry(generateKey()),
  });
  running = await startServices(config, pino({ level: 'silent' }), { api: true, worker: true });
  pool = await openPool(db.url, 2);
  store = await createStore(pool, 'Metrics service', config.keyPrefix);
  const connected = await httpCall(apiUrl, {
    method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, headers: { 'x-api-key': store.keys.test.secretKey },
    payload: { consumerKey: merchant.consumerKey, consumerSecret: merchant.consumerSecret, shortcode: '174379', passkey: merchant.passkey, environment: 'sandbox' },
  });
  expect(connected.status).toBe(200);
}, 120_000);
afterAll(async () => {
  await running?.stop();
  await pool?.end();
  await db?.drop();
  await daraja?.close();
});

const get = async (base: string, headers: Record<string, string> = {}) => {
  const res = await httpCall(base, { method: 'GET', url: '/metrics', headers });
  expect(res.status).toBe(200);
  return res.text;
};
const scrapeApi = () => get(apiUrl, { authorization: `Bearer ${token}` });

describe('a running service, scraped', () => {
  it('counts an M-Pesa payment on the API, the worker port and the Temporal SDK exporter, with bounded labels only', async () => {
    const key = store.keys.test.secretKey;
    const sdkBefore = await get(temporalMetricsUrl);
    const link = await httpCall(apiUrl, { method: 'POST', url: '/v1/payment-links', headers: { 'x-api-key': key }, payload: { enabledRails: ['MOBILE_MONEY'], mobileMoneyAmount: 120 } });
    expect(link.status).toBe(201);
    const id = link.body.id as string;
    const paid = await eventually(async () => {
      const res = await httpCall(apiUrl, { method: 'POST', url: `/v1/merchant/payment-links/${id}/pay/mobile-money`, headers: { 'x-api-key': key }, payload: { phoneNumber: phone } });
      return res.status === 200 ? res : undefined;
    }, 'the prompt to be sent (the workflow starts after the answer)');
    const checkoutRequestId = paid.body.checkoutRequestId as string;
    await daraja.complete(checkoutRequestId, 'success');
    await eventually(async () => {
      const res = await httpCall(apiUrl, { method: 'GET', url: `/v1/payment-links/${id}`, headers: { 'x-api-key': key } });
      return res.body.status === 'CONFIRMED' || undefined;
    }, 'the link to confirm');

    // The API and the worker share one registry in this process: the worker's port serves the same counts.
    const worker = await eventually(async () => {
      const text = await get(workerMetricsUrl);
      return valueOf(text, 'malipo_payment_links_total', { event: 'confirmed', rail: 'MOBILE_MONEY', environment: 'test' }) === 1 ? text : undefined;
    }, 'the confirmation counted');
    expect(valueOf(worker, 'malipo_mpesa_stk_total', { step: 'push', result: 'accepted' })).toBe(1);
    expect(valueOf(worker, 'malipo_mpesa_stk_total', { step: 'callback', result: '0' })).toBe(1);
    // The STK query that settles the prompt, by the ResultCode it answered.
    expect(valueOf(worker, 'malipo_mpesa_stk_total', { step: 'query', result: '0' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(worker, 'malipo_mpesa_stk_total', { step: 'settlement', result: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(valueOf(worker, 'malipo_link_confirmation_seconds_count', { rail: 'MOBILE_MONEY' })).toBe(1);

    const api = await scrapeApi();
    expect(valueOf(api, 'malipo_http_requests_total', { method: 'POST', route: '/v1/merchant/payment-links/:linkId/pay/mobile-money', status: '200' })).toBeGreaterThanOrEqual(1);
    // Read from the database at scrape time: nothing waits for its workflow here.
    expect(api).toMatch(/^malipo_link_workflows_unstarted 0$/m);
    expect(api).toMatch(/^malipo_link_workflows_unstarted_oldest_seconds 0$/m);

    // The SDK's own worker metrics moved with the payment: workflow tasks scheduled and run, activities run.
    const sdk = await get(temporalMetricsUrl);
    const moved = ['temporal_workflow_task_schedule_to_start_latency_count', 'temporal_workflow_task_execution_latency_count', 'temporal_activity_execution_latency_count', 'temporal_activity_task_received_total'];
    expect(moved.filter((name) => !(sumOf(sdk, name) > sumOf(sdkBefore, name)))).toEqual([]);

    // No label anywhere is the link, the key, the phone or the prompt.
    for (const text of [api, worker, sdk]) {
      const values = labelValues(text);
      expect(values.length).toBeGreaterThan(5);
      expect(offendingLabels(values, [id, key, phone, checkoutRequestId])).toEqual([]);
    }
  }, 120_000);
});
