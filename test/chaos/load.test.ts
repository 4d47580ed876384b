import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { Client, Connection } from '@temporalio/client';
import { openPool, type DatabasePool } from '../../db/pool.js';
import { createStore, type CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { randomToken } from '../../domain/ids.js';
import { startDarajaEmulator, type DarajaEmulator, type EmulatorMerchant } from '../../emulators/daraja/server.js';
import { startAppGroup, type AppGroup } from '../../runtime/cluster/app-group.js';
import { deployTestToken, keepMining, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { createTestDatabase } from '../helpers/database.js';
import { connectBody, sandboxPaybill } from '../helpers/daraja.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';
import { freePort } from '../helpers/ports.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { clientIp, phoneOf, ShopClient, type CustomerPath, type CustomerResult, type Shop } from './customers.js';
import { auditPayments, deliveredFrom, type MadePayment } from './harness/audit.js';
import { dumpDatabase } from './harness/evidence.js';
import { artifactDir, registerSecrets, sized, writeReport } from './harness/report.js';

/**
 * LOAD: 200 concurrent customers on mixed paths (create a link, open the checkout and poll it,
 * pay by M-Pesa or in USDT on anvil, some cancel, some race a cancel) for minutes, against real
 * PostgreSQL and the run's Temporal dev server, with the API and the worker as separate processes
 * (`malipo api`, `malipo worker`) whose memory is read from /proc. Nothing may answer 5xx or 429,
 * lose a payment or a webhook, and neither process may grow past its warm size by more than the
 * bound below.
 *
 * Rate limits stay on, configured as an operator does behind a load balancer: TRUST_PROXY names
 * the balancer (here the load generator on 127.0.0.1) and each client's address arrives in
 * X-Forwarded-For, so the per-IP limits apply per customer and per merchant server, not to one
 * shared address.
 */
const scenario = 'load';
const customers = 200;
const merchants = 20;
const warmupMs = sized(20_000, 30_000);
const loadMs = sized(90_000, 300_000);
/**
 * Memory bound: end RSS ≤ 1.5 × warm RSS + 96 MB. After warm-up the code is compiled and the
 * pools, caches and the worker's workflow bundle and sticky cache are filled; what still moves is
 * V8 deciding when to collect (the young and old generations grow in steps of tens of MB before a
 * major GC) and glibc arenas keeping freed pages. 1.5× plus a fixed slack absorbs that without
 * letting through a leak that grows with traffic: the full profile makes tens of thousands of
 * requests, so even 10 KB kept per request breaks the bound.
 */
const rssFactor = 1.5;
const rssSlackMb = 96;

interface Merchant {
  store: CreatedStore;
  shop: ShopClient;
  webhookSecret: string;
  mpesa: EmulatorMerchant;
}

let db: { url: string; drop: () => Promise<void> };
let pool: DatabasePool;
let anvil: Anvil;
let usdt: TestToken;
let daraja: DarajaEmulator;
let receiver: WebhookReceiver;
let group: AppGroup | undefined;
let dataDir: string;
let baseUrl: string;
let miner: { stop(): Promise<void> } | undefined;
const output = new Map<string, string[]>();
const encryptionKey = formatKeyEntry(generateKey());
const taskQueuePrefix = `l${randomToken(8)}-`;
const shops: Merchant[] = [];
const made: MadePayment[] = [];
const statuses = new Map<number, number>();
const fivexx: string[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
}

beforeAll(async () => {
  const temporalAddress = process.env.MALIPO_TEST_TEMPORAL_ADDRESS;
  if (!temporalAddress) throw new Error('the chaos global setup did not start Temporal');
  db = await createTestDatabase();
  pool = await openPool(db.url, 3);
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  for (const payer of anvil.accounts.slice(1)) await usdt.mint(payer, 10n ** 30n);
  const paybills = Array.from({ length: merchants }, (_, i) => sandboxPaybill(`load-${i}-${randomToken(4)}`));
  daraja = await startDarajaEmulator({ merchants: paybills });
  receiver = await WebhookReceiver.start();
  dataDir = await mkdtemp(join(tmpdir(), 'malipo-chaos-load-'));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  group = await startAppGroup({
    apiPorts: [port],
    workers: 1,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: 'default',
      TASK_QUEUE_PREFIX: taskQueuePrefix,
      PUBLIC_BASE_URL: baseUrl,
      ENCRYPTION_KEY: encryptionKey,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      // The load generator is the load balancer: its X-Forwarded-For carries each client's address.
      TRUST_PROXY: '127.0.0.1',
      MPESA_SANDBOX_URL: daraja.url,
      MPESA_QUERY_AFTER_SECONDS: '20',
      RPC_URL_USDT_BSC_TEST: anvil.url,
      // anvil, as the checkout's wallet URIs say and the start-up check verifies.
      CHAIN_ID_USDT_BSC_TEST: String(anvil.chainId),
      USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
      CONFIRMATIONS_USDT_BSC: '3',
      CHAIN_WATCHERS: 'on',
      CHAIN_POLL_MS: '500',
      WEBHOOK_RETRY_SCALE: '0.01',
      WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback',
      // One API process: its rate-limit counters can live in its memory (several would share REDIS_URL).
      REDIS_URL: '',
    },
    onLine: (name, line) => {
      const lines = output.get(name) ?? [];
      lines.push(line);
      output.set(name, lines);
    },
  });

  const shopBase: Omit<Shop, 'secretKey' | 'merchantIp'> = {
    baseUrl,
    daraja,
    token: usdt,
    decimals: 18,
    forwardedFor: true,
    stepTimeoutMs: 180_000,
    onAnswer: (res, req) => {
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500 && fivexx.length < 20) fivexx.push(`${req.method} ${req.url} → ${res.status} ${res.text.slice(0, 300)}`);
    },
    made,
  };
  for (const [i, mpesa] of paybills.entries()) {
    const store = await createStore(pool, `Load shop ${i}`, 'sk');
    const merchantIp = `10.20.0.${i + 1}`;
    const shop = new ShopClient({ ...shopBase, secretKey: store.keys.test.secretKey, merchantIp });
    const auth = { key: store.keys.test.secretKey };
    const connected = await shop.call({ method: 'POST', url: `/v1/merchant/clients/${store.clientId}/mobile-money/connect`, ...auth, payload: connectBody(mpesa) });
    expect(connected.status).toBe(200);
    const wallet = await shop.call({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/evm`, ...auth, payload: { xpub: randomAccountXpubs().evm } });
    expect(wallet.status).toBe(200);
    const endpoint = await shop.call({ method: 'POST', url: '/v1/webhook-endpoints', ...auth, payload: { url: receiver.url(`/hooks/${i}`) } });
    expect(endpoint.status).toBe(201);
    shops.push({ store, shop, webhookSecret: endpoint.body.secret, mpesa });
    await registerSecrets(scenario, [
      { kind: 'secret API key (test)', value: store.keys.test.secretKey },
      { kind: 'secret API key (live)', value: store.keys.live.secretKey },
      { kind: 'M-Pesa consumer key', value: mpesa.consumerKey },
      { kind: 'M-Pesa consumer secret', value: mpesa.consumerSecret },
      { kind: 'webhook endpoint secret', value: endpoint.body.secret },
    ]);
  }
  await registerSecrets(scenario, [
    { kind: 'M-Pesa passkey', value: paybills[0]!.passkey },
    { kind: 'ENCRYPTION_KEY', value: encryptionKey },
  ]);

  miner = keepMining(anvil, 1_000);
}, 300_000);

afterAll(async () => {
  await miner?.stop();
  const dir = await artifactDir(scenario);
  if (db) await dumpDatabase(db.url, join(dir, 'app.sql')).catch((err) => console.error(`could not dump the database: ${(err as Error).message}`));
  if (daraja) {
    const tokens = [...daraja.state.prompts.values()].map((p) => ({ kind: 'M-Pesa callback token', value: new URL(p.callbackUrl).pathname.split('/').pop() ?? '' }));
    await registerSecrets(scenario, tokens);
    await writeFile(join(dir, 'daraja.log'), daraja.requests.map((r) => `${r.method} ${r.path} ${r.status}`).join('\n'));
  }
  await group?.stop();
  for (const [name, lines] of output) await writeFile(join(dir, `${name}.log`), lines.join('\n'));
  if (receiver) await writeFile(join(dir, 'webhooks.log'), deliveredFrom(receiver.received).map((e) => `${e.id} ${e.type} ${e.objectId ?? ''}`).join('\n'));
  await pool?.end();
  await db?.drop();
  await daraja?.close();
  await receiver?.down();
  await anvil?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 180_000);

describe('load: 200 concurrent customers on the api and worker processes', () => {
  it('answers no 5xx or 429, loses nothing and keeps each process’s memory flat', async () => {
    const api = group!.apis[0]!;
    const worker = group!.workers[0]!;
    const paths: CustomerPath[] = ['mpesa', 'usdt', 'mpesa', 'usdt', 'mpesa', 'usdt', 'cancel-race', 'idempotent-retry', 'abandon-cancel', 'usdt'];
    const results: CustomerResult[] = [];
    const failures: string[] = [];
    const samples: string[] = [];
    let order = 0;
    const started = Date.now();
    const stopAt = started + warmupMs + loadMs;

    /** One customer slot: its own address, one order after another, with a human's pauses. */
    const slot = async (s: number) => {
      const merchant = shops[s % merchants]!;
      await sleep(Math.floor(Math.random() * 10_000)); // arrivals spread over the first seconds
      while (Date.now() < stopAt) {
        const n = ++order;
        const path = paths[n % paths.length]!;
        try {
          results.push(
            await merchant.shop.customer(path, n, {
              ip: clientIp(s, 30),
              phone: phoneOf(n, '2541'),
              payer: anvil.accounts[1 + (s % 9)]!,
              tag: `load-${s}`,
              thinkMs: 1_000 + Math.floor(Math.random() * 2_000),
              pollMs: 4_000,
            }),
          );
        } catch (err) {
          failures.push(`${path} #${n}: ${(err as Error).message}`);
        }
        await sleep(10_000 + Math.floor(Math.random() * 20_000));
      }
    };
    const running = Array.from({ length: customers }, (_, s) => slot(s));

    await sleep(warmupMs);
    const rssStart = { api: await rssKb(api.pid), worker: await rssKb(worker.pid) };
    const requestsAtWarm = [...statuses.values()].reduce((a, b) => a + b, 0);
    samples.push(`${Math.round((Date.now() - started) / 1000)}s api ${Math.round(rssStart.api / 1024)} MB worker ${Math.round(rssStart.worker / 1024)} MB`);
    const sampler = (async () => {
      while (Date.now() < stopAt) {
        await sleep(Math.min(15_000, Math.max(0, stopAt - Date.now())));
        samples.push(`${Math.round((Date.now() - started) / 1000)}s api ${Math.round((await rssKb(api.pid)) / 1024)} MB worker ${Math.round((await rssKb(worker.pid)) / 1024)} MB`);
      }
    })();
    await Promise.all(running);
    await sampler;
    const rssEnd = { api: await rssKb(api.pid), worker: await rssKb(worker.pid) };
    const loadSeconds = Math.round(loadMs / 1000);
    const drainSeconds = Math.round((Date.now() - stopAt) / 1000);
    const requests = [...statuses.values()].reduce((a, b) => a + b, 0);

    // Recovery is not needed (no faults): what is left is the tail of confirmations and webhooks.
    const owners = new Map(
      (await pool.any(sql.type(z.object({ id: z.string(), store_id: z.string() }))`SELECT id, store_id FROM payment_links WHERE id = ANY(${sql.array(made.map((m) => m.linkId), 'text')})`)).map((r) => [r.id, r.store_id]),
    );
    const byMerchant = new Map<string, MadePayment[]>();
    for (const m of made) {
      const key = owners.get(m.linkId) ?? '';
      byMerchant.set(key, [...(byMerchant.get(key) ?? []), m]);
    }
    const unsettled = (
      await Promise.all(shops.map((m) => m.shop.waitSettled(byMerchant.get(m.store.clientId) ?? [], Date.now() + 180_000, 2_000)))
    ).flat();
    const storeIds = shops.map((m) => m.store.clientId);
    const check = new pg.Client({ connectionString: db.url });
    await check.connect();
    const deadline = Date.now() + 180_000;
    let missing = 0;
    for (;;) {
      const received = new Set(deliveredFrom(receiver.received).map((e) => e.id));
      const ids = (await check.query<{ id: string }>('SELECT id FROM events WHERE store_id = ANY($1::text[])', [storeIds])).rows.map((r) => r.id);
      missing = ids.filter((id) => !received.has(id)).length;
      if (missing === 0 || Date.now() > deadline) break;
      await sleep(1_000);
    }
    const duplicateLinks = (
      await check.query<{ store_id: string; merchant_ref: string }>(
        `SELECT store_id, merchant_ref FROM payment_links WHERE store_id = ANY($1::text[]) GROUP BY store_id, merchant_ref HAVING count(*) > 1`,
        [storeIds],
      )
    ).rows;
    await check.end();

    const connection = await Connection.connect({ address: process.env.MALIPO_TEST_TEMPORAL_ADDRESS! });
    const audit = await auditPayments({
      databaseUrl: db.url,
      temporal: new Client({ connection, namespace: 'default' }),
      made,
      delivered: deliveredFrom(receiver.received),
      deliveredStores: storeIds,
    });
    await connection.close();

    const count = (pred: (s: number) => boolean) => [...statuses].filter(([s]) => pred(s)).reduce((a, [, c]) => a + c, 0);
    const settle = results.flatMap((r) => (r.settleMs === undefined ? [] : [r.settleMs])).sort((a, b) => a - b);
    const pct = (p: number) => (settle.length ? settle[Math.min(settle.length - 1, Math.floor((settle.length * p) / 100))]! : 0);
    const byPath = Object.fromEntries([...new Set(paths)].map((p) => [p, results.filter((r) => r.path === p).length]));
    const settleByPath = [...new Set(paths)].flatMap((p) => {
      const ms = results.filter((r) => r.path === p && r.settleMs !== undefined).map((r) => r.settleMs!).sort((a, b) => a - b);
      return ms.length ? [`${p} p50 ${ms[Math.floor(ms.length / 2)]} ms p95 ${ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.95))]} ms`] : [];
    });
    const mb = (kb: number) => Math.round(kb / 1024);
    const bound = (start: number) => start * rssFactor + rssSlackMb * 1024;
    await writeReport(scenario, {
      payments: audit.payments,
      confirmedOnce: audit.confirmedOnce,
      doubleConfirmed: audit.doubleConfirmed + duplicateLinks.length,
      eventsDelivered: audit.eventsDelivered,
      eventsLost: audit.eventsLost,
      paymentsLost: audit.paymentsLost,
      stuck: audit.stuck,
      duplicateAddresses: audit.duplicateAddresses,
      http5xx: count((s) => s >= 500),
      linksByState: audit.linksByState,
      notes: [
        `profile ${sized('ci', 'full')}: ${customers} concurrent customers, ${merchants} merchants, ${warmupMs / 1000} s warm-up then ${loadSeconds} s of new orders and ${drainSeconds} s finishing those under way; ${requests} requests (${requestsAtWarm} during warm-up), ${Math.round((requests - requestsAtWarm) / Math.max(1, loadSeconds + drainSeconds))}/s after`,
        `orders: ${results.length} finished (${Object.entries(byPath).map(([p, c]) => `${p} ${c}`).join(', ')}), ${failures.length} failed; pay→checkout shows final p50 ${pct(50)} ms, p95 ${pct(95)} ms, max ${pct(100)} ms (${settleByPath.join('; ')}; the page polls every 4 s)`,
        `RSS api (pid ${api.pid}): ${mb(rssStart.api)} MB after warm-up → ${mb(rssEnd.api)} MB at the end (bound ${mb(bound(rssStart.api))} MB)`,
        `RSS worker (pid ${worker.pid}): ${mb(rssStart.worker)} MB after warm-up → ${mb(rssEnd.worker)} MB at the end (bound ${mb(bound(rssStart.worker))} MB)`,
        `RSS samples: ${samples.join('; ')}`,
        `answers by status: ${[...statuses].sort(([a], [b]) => a - b).map(([s, c]) => `${s}×${c}`).join(', ')}`,
      ],
    });

    expect(fivexx).toEqual([]);
    expect(count((s) => s >= 500)).toBe(0);
    expect(count((s) => s === 429)).toBe(0);
    expect(failures).toEqual([]);
    expect(unsettled).toEqual([]);
    expect(audit.problems).toEqual([]);
    expect(missing).toBe(0);
    expect(duplicateLinks).toEqual([]);
    expect(results.filter((r) => r.createdIds.size !== 1).map((r) => r.merchantRef)).toEqual([]);
    expect(rssEnd.api).toBeLessThanOrEqual(bound(rssStart.api));
    expect(rssEnd.worker).toBeLessThanOrEqual(bound(rssStart.worker));
  });
});
