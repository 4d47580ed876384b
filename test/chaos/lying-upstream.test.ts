import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { createStore } from '../../db/store-repo.js';
import { openPool } from '../../db/pool.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { deployTestToken, keepMining, startAnvil, type Anvil, type TestToken } from '../helpers/anvil.js';
import { randomAccountXpubs } from '../helpers/fixtures.js';
import { startFlakyRpc, type Fault, type FlakyRpc } from '../helpers/flaky-rpc.js';
import { freePort } from '../helpers/ports.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { clientIp, phoneOf, ShopClient, type CustomerResult } from './customers.js';
import { auditPayments, deliveredFrom, type MadePayment } from './harness/audit.js';
import { startClusterTopology } from './harness/cluster-topology.js';
import { dumpDatabase, saveHistories } from './harness/evidence.js';
import { artifactDir, registerSecrets, sized, writeReport } from './harness/report.js';

/**
 * LYING UPSTREAM: the BSC rail is read from two RPC providers (RPC_URL_USDT_BSC_TEST is a list),
 * the first of which lies on a share of its requests, chosen at random per request: an empty
 * eth_getLogs answer, a stale head, a block hash from a fork, or an HTTP error. The second tells
 * the truth. Customers pay links in USDT on anvil, on both topologies: production's
 * (docs/production.md, built by the cluster harness as cluster-faults builds it: a PostgreSQL of
 * its own, the pinned Temporal server on it, Redis, a `malipo api` and a `malipo worker` process)
 * and the embedded default (`malipo start`: API, worker and PGlite in one process, its dev server
 * a child). The reconciler runs every 3 s. Every payment must confirm exactly once; none may be
 * lost. The worker's log says which deposits the second lines found: the watcher's rescan of
 * unfinalized blocks, the watcher's second provider, or the reconciler's targeted rescan.
 */
const scenario = 'lying-upstream';
const payments = sized(40, 120);
const concurrency = 8;
/** The share of the liar's requests that lie (each lie picked in turn among its kinds). */
const lieShare = 0.3;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let anvil: Anvil;
let usdt: TestToken;
let receiver: WebhookReceiver;
let miner: { stop(): Promise<void> } | undefined;
const encryptionKey = formatKeyEntry(generateKey());
const run = promisify(execFile);

/** The lies, each on `share` of the requests of its method, the kinds of a method taken in turn. */
function lieOn(rpc: FlakyRpc, share: number): void {
  const sometimes = () => Math.random() < share;
  const empty: Fault = { rewrite: (a) => ({ ...a, result: [] }) };
  const stale: Fault = {
    rewrite: (a) => {
      const behind = BigInt(1 + Math.floor(Math.random() * 40));
      const head = typeof a.result === 'string' ? BigInt(a.result) : 0n;
      return { ...a, result: `0x${(head > behind ? head - behind : 0n).toString(16)}` };
    },
  };
  const forked: Fault = { rewrite: (a) => (a.result && typeof a.result === 'object' ? { ...a, result: { ...a.result, hash: `0x${randomBytes(32).toString('hex')}` } } : a) };
  rpc.fail({ method: 'eth_getLogs', when: sometimes, fault: [empty, 'http500'] });
  rpc.fail({ method: 'eth_blockNumber', when: sometimes, fault: [stale, 'http500'] });
  rpc.fail({ method: 'eth_getBlockByNumber', when: sometimes, fault: [forked, 'http500'] });
  rpc.fail({ method: 'eth_getTransactionReceipt', when: sometimes, fault: 'http500' });
}

/** One running Malipo, whichever its topology, as this scenario needs it. */
interface Deployment {
  baseUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  /** A store, made as an operator makes one on this topology. */
  createStore(): Promise<{ clientId: string; keys: { test: { secretKey: string }; live: { secretKey: string } } }>;
  /** The output of the process(es) that run the worker. */
  workerLines(): string[];
  /** Leaves its logs and database dump in `dir`, then stops. */
  stop(dir: string): Promise<void>;
}

/** The environment both topologies share: two BSC providers, the liar first (asked first until its lies sideline it). */
function chainEnv(liar: FlakyRpc): Record<string, string> {
  return {
    NODE_OPTIONS: '',
    ENCRYPTION_KEY: encryptionKey,
    LOG_LEVEL: 'info',
    RPC_URL_USDT_BSC_TEST: `${liar.url},${anvil.url}`,
    CHAIN_ID_USDT_BSC_TEST: String(anvil.chainId),
    USDT_CONTRACT_USDT_BSC_TEST: usdt.address,
    CONFIRMATIONS_USDT_BSC: '3',
    CHAIN_WATCHERS: 'on',
    CHAIN_POLL_MS: '250',
    WEBHOOK_RETRY_SCALE: '0.01',
    WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback',
    // The reconciler every 3 s (a fraction of a minute; docs/reconciliation.md), so that it races
    // the watcher's own second lines for every deposit instead of running once in the scenario.
    RECONCILE_EVERY_MINUTES: '0.05',
  };
}

/**
 * Production's topology (docs/production.md), as the cluster harness builds it for cluster-faults:
 * a PostgreSQL of its own holding Malipo's database and Temporal's two, the pinned Temporal server
 * on it, Redis, one `malipo api` and one `malipo worker` process. Nothing is killed here.
 */
async function production(liar: FlakyRpc): Promise<Deployment> {
  const topo = await startClusterTopology({ apis: 1, workers: 1, env: chainEnv(liar) });
  const pool = await openPool(topo.appDbUrl, 2);
  return {
    baseUrl: topo.apiUrls[0]!,
    databaseUrl: topo.appDbUrl,
    temporalAddress: topo.temporalAddress,
    createStore: () => createStore(pool, 'Lying upstream shop', 'sk'),
    workerLines: () => [...topo.output.entries()].filter(([name]) => name.startsWith('worker')).flatMap(([, lines]) => lines),
    async stop(dir) {
      const keep = async (what: string, fn: () => Promise<unknown>) => fn().catch((err) => console.error(`could not save ${what}: ${(err as Error).message}`));
      await pool.end().catch(() => undefined);
      for (const [name, lines] of topo.output) await writeFile(join(dir, `${name}.log`), `${lines.join('\n')}\n`);
      await writeFile(join(dir, 'postgres.log'), `${topo.pg.lines.join('\n')}\n`);
      await copyFile(topo.temporalLogFile, join(dir, 'temporal-server.log')).catch(() => undefined);
      // The server's histories and databases are this scenario's evidence (the global teardown saves only the dev server's).
      await keep('the histories', () => saveHistories(topo.temporal, dir));
      await keep('the database', () => dumpDatabase(topo.appDbUrl, join(dir, 'app.sql')));
      await keep("Temporal's database", () => dumpDatabase(topo.pg.urlOf(topo.temporalDbNames.store), join(dir, 'temporal.sql')));
      await keep("Temporal's visibility database", () => dumpDatabase(topo.pg.urlOf(topo.temporalDbNames.visibility), join(dir, 'temporal_visibility.sql')));
      if (topo.unplannedExits.length > 0) console.error(`lying-upstream (production): unplanned exits: ${topo.unplannedExits.join('; ')}`);
      await topo.stop();
    },
  };
}

/** The embedded default: `malipo start` (API, worker and PGlite in one process, the dev server its child). */
async function embedded(liar: FlakyRpc): Promise<Deployment> {
  const dataDir = await mkdtemp(join(tmpdir(), 'malipo-chaos-lying-embedded-'));
  const [port, temporalPort, pglitePort, uiPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...chainEnv(liar),
    DATA_DIR: dataDir,
    PORT: String(port),
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_UI_PORT: String(uiPort),
    PGLITE_PORT: String(pglitePort),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
  };
  for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'REDIS_URL', 'TASK_QUEUE_PREFIX']) delete env[name];
  const lines: string[] = [];
  const child: ChildProcess = spawn(process.execPath, ['bin/malipo.mjs', 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const onData = (d: Buffer) => {
    text += d.toString();
    lines.push(...d.toString().split('\n').filter((l) => l.length > 0));
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 120_000;
  while (!text.includes('Malipo is running.')) {
    if (child.exitCode !== null) throw new Error(`malipo start exited (${child.exitCode}):\n${text}`);
    if (Date.now() > deadline) throw new Error(`malipo start did not start within 120 s:\n${text}`);
    await sleep(100);
  }
  const databaseUrl = `postgres://postgres@127.0.0.1:${pglitePort}/postgres?sslmode=disable`;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    databaseUrl,
    temporalAddress: `127.0.0.1:${temporalPort}`,
    async createStore() {
      const { stdout } = await run(process.execPath, ['bin/malipo.mjs', 'stores:create', '--name', 'Lying upstream shop'], { env });
      return JSON.parse(stdout);
    },
    workerLines: () => lines,
    async stop(dir) {
      await dumpDatabase(databaseUrl, join(dir, 'app.sql')).catch((err) => console.error(`could not dump the embedded database: ${(err as Error).message}`));
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      await writeFile(join(dir, 'malipo-start.log'), lines.join('\n'));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The deployment's worker log lines (pino JSON) with this message. */
function logLines(d: Deployment, msg: string): Array<Record<string, unknown>> {
  return d.workerLines().flatMap((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return entry.msg === msg ? [entry] : [];
    } catch {
      return [];
    }
  });
}

beforeAll(async () => {
  anvil = await startAnvil();
  usdt = await deployTestToken(anvil, { decimals: 18 });
  for (const payer of anvil.accounts.slice(1)) await usdt.mint(payer, 10n ** 30n);
  await anvil.rpc('anvil_mine', ['0x40']); // a stale head has somewhere to fall back to
  receiver = await WebhookReceiver.start();
  miner = keepMining(anvil, 300);
}, 120_000);

afterAll(async () => {
  await miner?.stop();
  await receiver?.down();
  await anvil?.stop();
}, 60_000);

describe('lying upstream: two RPC providers on the BSC rail, one lying at random', () => {
  it.each([['production', production], ['embedded', embedded]] as const)('%s: confirms every payment exactly once and loses none', async (topology, deploy) => {
    const name = `${scenario}-${topology}`;
    const liar = await startFlakyRpc(anvil.url);
    const d = await deploy(liar);
    const dir = await artifactDir(name);
    try {
      await lyingUpstream(name, topology, d, liar);
    } finally {
      await d.stop(dir);
      await writeFile(join(dir, 'liar.log'), liar.calls.map((c) => `${c.method} ${c.fault ?? ''}`).join('\n'));
      await liar.close();
    }
  });
});

async function lyingUpstream(name: string, topology: string, d: Deployment, liar: FlakyRpc): Promise<void> {
  const made: MadePayment[] = [];
  const statuses = new Map<number, number>();
  const hooks = `/hooks/${topology}`;
  const delivered = () => deliveredFrom(receiver.received.filter((r) => r.path === hooks));
  const store = await d.createStore();
  const shop = new ShopClient({
    baseUrl: d.baseUrl,
    secretKey: store.keys.test.secretKey,
    daraja: undefined as never, // no M-Pesa customers in this scenario
    token: usdt,
    decimals: 18,
    stepTimeoutMs: 180_000,
    onAnswer: (res) => statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1),
    made,
  });
  const auth = { key: store.keys.test.secretKey };
  const wallet = await shop.call({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/evm`, ...auth, payload: { xpub: randomAccountXpubs().evm } });
  expect(wallet.status).toBe(200);
  const endpoint = await shop.call({ method: 'POST', url: '/v1/webhook-endpoints', ...auth, payload: { url: receiver.url(hooks) } });
  expect(endpoint.status).toBe(201);
  await registerSecrets(name, [
    { kind: 'secret API key (test)', value: store.keys.test.secretKey },
    { kind: 'secret API key (live)', value: store.keys.live.secretKey },
    { kind: 'webhook endpoint secret', value: endpoint.body.secret },
    { kind: 'ENCRYPTION_KEY', value: encryptionKey },
  ]);
  lieOn(liar, lieShare);

  const results: CustomerResult[] = [];
  const failures: string[] = [];
  let next = 0;
  const started = Date.now();
  const slot = async (s: number) => {
    await sleep(s * 200);
    for (let n = ++next; n <= payments; n = ++next) {
      try {
        results.push(await shop.customer('usdt', n, { ip: clientIp(n, 40), phone: phoneOf(n, '2549'), payer: anvil.accounts[1 + (s % 9)]!, tag: `lying-${topology}` }));
      } catch (err) {
        failures.push(`usdt #${n}: ${(err as Error).message}`);
      }
      // Payments spread over many ticks, so the lies land on windows that hold deposits.
      await sleep(1_000 + Math.floor(Math.random() * 2_000));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, s) => slot(s)));
  const paidMs = Date.now() - started;

  const settledFrom = Date.now();
  const unsettled = await shop.waitSettled(made, settledFrom + 300_000);
  const tailMs = Date.now() - settledFrom;
  const db = new pg.Client({ connectionString: d.databaseUrl });
  await db.connect();
  const eventsDeadline = Date.now() + 120_000;
  for (;;) {
    const received = new Set(delivered().map((e) => e.id));
    const ids = (await db.query<{ id: string }>('SELECT id FROM events WHERE store_id = $1', [store.clientId])).rows.map((r) => r.id);
    if (ids.every((id) => received.has(id)) || Date.now() > eventsDeadline) break;
    await sleep(500);
  }
  // That the reconciler ran: the addresses it read a balance of, and what it could not explain.
  const checked = Number((await db.query<{ n: string }>('SELECT count(*)::text AS n FROM reconciliation_addresses')).rows[0]!.n);
  const findings = (await db.query<{ kind: string; status: string; n: string }>('SELECT kind, status, count(*)::text AS n FROM reconciliation_findings WHERE store_id = $1 GROUP BY kind, status ORDER BY kind, status', [store.clientId])).rows;
  await db.end();
  const connection = await Connection.connect({ address: d.temporalAddress });
  const audit = await auditPayments({ databaseUrl: d.databaseUrl, temporal: new Client({ connection, namespace: 'default' }), made, delivered: delivered(), deliveredStores: [store.clientId] });
  await connection.close();

  const distinctTx = (msg: string) => new Set(logLines(d, msg).map((l) => l.txHash)).size;
  const byRescan = distinctTx('deposit found by the rescan of unfinalized blocks');
  const bySecond = distinctTx('deposit found by a second provider');
  // services/reconciliation/reconcile.ts: one line per address whose targeted rescan recorded deposits.
  const reconciled = logLines(d, 'deposits recorded by the reconciler (targeted rescan)');
  const byReconciler = new Set(reconciled.flatMap((l) => (Array.isArray(l.txHashes) ? (l.txHashes as string[]) : []))).size;
  const lies = liar.calls.filter((c) => c.fault);
  const liesBy = (method: string, fault: string) => lies.filter((c) => c.method === method && c.fault === fault).length;
  const reports = ['lagging', 'erroring', 'disagreeing'].map((state) => `${state} ${logLines(d, `chain provider ${state}; asked last for a while`).length + logLines(d, `chain provider ${state}`).length}`);
  const count = (pred: (s: number) => boolean) => [...statuses].filter(([s]) => pred(s)).reduce((a, [, c]) => a + c, 0);
  await writeReport(name, {
    faults: lies.length,
    payments: audit.payments,
    confirmedOnce: audit.confirmedOnce,
    doubleConfirmed: audit.doubleConfirmed,
    eventsDelivered: audit.eventsDelivered,
    eventsLost: audit.eventsLost,
    paymentsLost: audit.paymentsLost,
    stuck: audit.stuck,
    duplicateAddresses: audit.duplicateAddresses,
    http5xx: count((s) => s >= 500),
    linksByState: audit.linksByState,
    notes: [
      `deposits made ${made.length}, confirmed exactly once ${audit.confirmedOnce}, lost ${audit.paymentsLost}; found by the rescan ${byRescan}, by the second provider ${bySecond}, by the reconciler ${byReconciler}`,
      `the reconciler (every 3 s) read the balances of ${checked} addresses; its findings: ${findings.map((f) => `${f.kind} ${f.status} ${f.n}`).join(', ') || 'none'}`,
      `the liar (provider #1 of 2) lied on ${lies.length} of its ${liar.calls.length} requests: empty logs ${liesBy('eth_getLogs', 'rewrite')}, stale head ${liesBy('eth_blockNumber', 'rewrite')}, fork hash ${liesBy('eth_getBlockByNumber', 'rewrite')}, HTTP 500 ${lies.filter((c) => c.fault === 'http500').length}; its warn lines (one per sideline, or a minute) call it ${reports.join(', ')}`,
      `profile ${sized('ci', 'full')}: ${payments} USDT payments by ${concurrency} customers at a time in ${Math.round(paidMs / 1000)} s; all settled ${Math.round(tailMs / 1000)} s after the last; ${failures.length} customers failed`,
    ],
  });

  expect(failures).toEqual([]);
  expect(unsettled).toEqual([]);
  expect(audit.problems).toEqual([]);
  expect(audit.paymentsLost).toBe(0);
  expect(audit.confirmedOnce).toBe(made.length);
  expect(lies.length).toBeGreaterThan(0);
  expect(count((s) => s >= 500)).toBe(0);
}
