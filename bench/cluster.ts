// `npm run bench cluster`: the sizing facts of the production topology (docs/production.md), side
// by side with the dev server in the same run. Each Temporal runs alone while it is measured:
//   1. raw workflow starts/s at concurrency 8 and 32: the cluster on PostgreSQL, the dev server on
//      its SQLite file (the embedded default), the dev server in memory;
//   2. with 2 API processes and 1, then 2 worker processes (as `npm run start:cluster` runs them):
//      link creations/s through one and through both APIs, links paid/s (simulate-payment answers
//      once the worker-run workflow has CONFIRMED the link), webhook deliveries/s;
//   3. PostgreSQL connections per database: at rest and the most seen during each step.
// Throughput on a shared 2-core machine moves with whatever else runs, so every step also reports
// the CPU each kind of process spent per operation (from /proc), which holds still under load.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { createWebhookActivities } from '../activities/webhooks/index.js';
import { insertEvent } from '../db/event-repo.js';
import { randomToken } from '../domain/ids.js';
import { loadConfig } from '../config/config.js';
import { ensureClusterBinaries } from '../runtime/cluster/binaries.js';
import { freePorts } from '../runtime/cluster/ports.js';
import { clusterSettings } from '../runtime/cluster/settings.js';
import { startTemporalCluster } from '../runtime/cluster/temporal-cluster.js';
import { dropTemporalDatabases } from '../runtime/cluster/temporal-databases.js';
import { searchAttributeArgs, stopChild, waitForPort } from '../runtime/embedded-temporal.js';
import { ensureTemporalCli } from '../runtime/temporal-cli.js';
import { startClusterApps, type ClusterApps } from '../test/helpers/cluster-apps.js';
import { testDatabaseUrl } from '../test/helpers/database.js';
import { randomAccountXpubs } from '../test/helpers/fixtures.js';
import { processCpuMs, runConcurrently } from './load.js';
import { WebhookReceiver } from '../test/helpers/webhook-receiver.js';

type Variant = 'cluster' | 'devSqlite' | 'devMemory';
interface RunningTemporal { address: string; pid: number; databases: string[]; stop(): Promise<void> }

/** CPU spent per operation by each group of processes over one step. */
function cpuMeter(groups: () => Record<string, number[]>) {
  const snap = () => Object.fromEntries(Object.entries(groups()).map(([g, pids]) => [g, new Map(pids.map((p) => [p, processCpuMs(p)]))]));
  const before = snap();
  return (ops: number) => {
    const out: Record<string, number> = {};
    for (const [g, pids] of Object.entries(groups())) {
      let spent = 0;
      for (const pid of pids) {
        const start = before[g]?.get(pid);
        if (start !== undefined) spent += processCpuMs(pid) - start;
      }
      out[g] = Math.round((spent / ops) * 100) / 100;
    }
    return out;
  };
}

async function startVariant(variant: Variant): Promise<RunningTemporal> {
  if (variant === 'cluster') {
    const binaries = await ensureClusterBinaries({ log: console.error });
    const dir = await mkdtemp(join(tmpdir(), 'malipo-bench-cluster-'));
    const [frontendPort] = await freePorts(1);
    const cluster = await startTemporalCluster({
      binaries, dir, databaseUrl: testDatabaseUrl(), temporalDatabase: `temporal_b${randomToken(8).toLowerCase()}`, namespace: 'default', frontendPort: frontendPort!,
    });
    return {
      address: cluster.address,
      pid: cluster.pid,
      databases: [cluster.names.store, cluster.names.visibility],
      async stop() {
        await cluster.stop();
        await dropTemporalDatabases(testDatabaseUrl(), cluster.names);
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  // The dev server as `npm start` runs it (SQLite file), or in memory, with the search attributes.
  const cli = await ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH });
  const dir = await mkdtemp(join(tmpdir(), 'malipo-bench-dev-'));
  const [port] = await freePorts(1);
  const child = spawn(cli, [
    'server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error',
    ...(variant === 'devSqlite' ? ['--db-filename', join(dir, 'temporal.sqlite')] : []),
    ...searchAttributeArgs(),
  ], { stdio: 'ignore' });
  let exited: string | undefined;
  child.on('exit', (code) => (exited = `the dev server exited (${code})`));
  await waitForPort(port!, 60_000, () => exited);
  return {
    address: `127.0.0.1:${port}`,
    pid: child.pid!,
    databases: [],
    async stop() {
      await stopChild(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function rawStarts(temporal: RunningTemporal) {
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: 'default' });
  const tag = randomToken(6);
  const start = (c: number) => async (i: number) => {
    await client.workflow.start('systemCheck', { workflowId: `bench-start/${tag}/${c}/${i}`, taskQueue: `bench-nobody-${tag}` });
  };
  await runConcurrently(8, 50, start(0)); // warm-up
  const result: Record<string, unknown> = {};
  for (const [c, n] of [[8, 400], [32, 800]] as const) {
    const cpu = cpuMeter(() => ({ temporal: [temporal.pid] }));
    result[`c${c}`] = { ...(await runConcurrently(c, n, start(c))), cpuMsPerStart: cpu(n).temporal };
  }
  await connection.close();
  return result;
}

/** pg_stat_activity per database, sampled every 250 ms; `reset()` returns the most seen since the last one. */
function postgresWatch(databases: string[]) {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  let peak: Record<string, number> = {};
  let backends: number[] = [];
  let timer: NodeJS.Timeout | undefined;
  const sample = async () => {
    const rows = (await client.query<{ datname: string; pid: number }>('SELECT datname, pid FROM pg_stat_activity WHERE datname = ANY($1)', [databases])).rows;
    const now: Record<string, number> = {};
    for (const r of rows) now[r.datname] = (now[r.datname] ?? 0) + 1;
    for (const [db, n] of Object.entries(now)) peak[db] = Math.max(peak[db] ?? 0, n);
    backends = rows.map((r) => r.pid);
    return now;
  };
  return {
    async start() {
      await client.connect();
      await sample();
      timer = setInterval(() => void sample().catch(() => undefined), 250);
    },
    now: sample,
    backends: () => backends,
    reset() {
      const seen = peak;
      peak = {};
      return seen;
    },
    async stop() {
      clearInterval(timer);
      await client.end();
    },
  };
}

/** Link creations, payments and webhook deliveries through the API and worker processes. */
async function appLevel(temporal: RunningTemporal) {
  process.env.MALIPO_TEST_TEMPORAL_ADDRESS = temporal.address;
  const receiver = await WebhookReceiver.start();
  const apps: ClusterApps = await startClusterApps({ apis: 2, workers: 1, env: { WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback', LOG_LEVEL: 'error' } });
  const pgWatch = postgresWatch([...temporal.databases, apps.databaseName]);
  await pgWatch.start();
  const groups = () => ({
    api: apps.group.apis.map((p) => p.pid),
    worker: apps.group.workers.map((p) => p.pid),
    temporal: [temporal.pid],
    postgres: pgWatch.backends(),
  });
  try {
    const result: Record<string, unknown> = {};
    result.connectionsAtRest_1worker = await pgWatch.now();
    const store = await apps.createStore('Bench');
    const key = store.keys.test.secretKey;
    const put = await apps.request(0, { method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/evm`, key, payload: { xpub: randomAccountXpubs().evm } });
    if (put.status !== 200) throw new Error(`wallet: ${put.status} ${put.text}`);
    const endpoint = await apps.request(0, { method: 'POST', url: '/v1/webhook-endpoints', key, payload: { url: receiver.url('/hook'), enabledEvents: ['transfer.confirmed'] } });
    if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${endpoint.text}`);
    // Per-IP limits are not what is measured: spread requests over loopback source addresses.
    const from = (i: number) => `127.0.${(i % 200) + 20}.${(Math.floor(i / 200) % 200) + 20}`;
    const ids: string[] = [];
    const create = (apis: number) => async (i: number) => {
      const res = await apps.request(i % apis, { method: 'POST', url: '/v1/payment-links', key, localAddress: from(i), payload: { usdtAmount: '10', enabledRails: ['USDT_BSC'] } });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
      ids.push(res.body.id);
    };
    const pay = (offset: number) => async (i: number) => {
      const id = ids[offset + i]!;
      const res = await apps.request(i % 2, { method: 'POST', url: `/v1/payment-links/${id}/simulate-payment`, key, localAddress: from(offset + i), payload: { rail: 'USDT_BSC' } });
      if (res.status !== 200 || res.body.status !== 'CONFIRMED') throw new Error(`pay: ${res.status} ${res.text}`);
    };
    const config = loadConfig({ DATABASE_URL: 'postgres://unused', TEMPORAL_ADDRESS: temporal.address, TASK_QUEUE_PREFIX: apps.taskQueuePrefix, LOG_LEVEL: 'silent' });
    const webhooks = createWebhookActivities({ pool: apps.pool, temporal: apps.temporal, config });
    let delivered = 0;
    receiver.on('/hook', () => {
      delivered++;
      return { status: 200 };
    });
    // Dispatched as a worker would after a payment (one delivery workflow per event), from here.
    const deliveries = async (n: number) => {
      const target = delivered + n;
      const t0 = performance.now();
      await runConcurrently(16, n, async () => {
        const event = await insertEvent(apps.pool, {
          storeId: store.clientId, environment: 'test', type: 'transfer.confirmed', dedupeKey: `bench-${randomToken(12)}`, data: { bench: true }, createdAt: new Date().toISOString(),
        });
        await webhooks.dispatchEvent({ eventId: event.id });
      });
      await receiver.waitFor(() => delivered >= target, `${n} deliveries`, 600_000);
      return { total: n, perSecond: Math.round(n / ((performance.now() - t0) / 1000)) };
    };
    const step = async <T extends object>(ops: number, fn: () => Promise<T>) => {
      const cpu = cpuMeter(groups);
      const out = await fn();
      return { ...out, cpuMsPerOp: cpu(ops) };
    };

    await runConcurrently(8, 40, create(2)); // warm-up: both APIs, the worker's caches
    pgWatch.reset();
    for (const workers of [1, 2]) {
      if (workers === 2) {
        await apps.group.addWorker();
        result.connectionsAtRest_2workers = await pgWatch.now();
        pgWatch.reset();
      }
      const before = ids.length;
      result[`createOneApi_${workers}w`] = await step(300, () => runConcurrently(16, 300, create(1)));
      result[`createTwoApis_${workers}w`] = await step(300, () => runConcurrently(16, 300, create(2)));
      result[`pay_${workers}w`] = await step(300, () => runConcurrently(16, 300, pay(before)));
      result[`deliveries_${workers}w`] = await step(400, () => deliveries(400));
      result[`connectionsPeak_${workers}w`] = pgWatch.reset();
    }
    return result;
  } finally {
    await pgWatch.stop();
    await apps.stop();
    await receiver.down();
  }
}

export async function benchCluster() {
  const results: Record<string, unknown> = {
    machine: { cpus: cpus().length, loadAverageAtStart: loadavg().map((x) => Math.round(x * 10) / 10) },
    settings: { numHistoryShards: clusterSettings.numHistoryShards, sqlMaxConns: clusterSettings.sqlMaxConns, sqlVisibilityMaxConns: clusterSettings.sqlVisibilityMaxConns },
  };
  const starts: Record<string, unknown> = {};
  for (const variant of ['cluster', 'devSqlite', 'devMemory'] as const) {
    const temporal = await startVariant(variant);
    try {
      starts[variant] = await rawStarts(temporal);
      console.error(variant, 'starts', JSON.stringify(starts[variant]));
      if (variant !== 'devMemory') {
        results[`apps_${variant}`] = await appLevel(temporal);
        console.error(variant, 'apps', JSON.stringify(results[`apps_${variant}`]));
      }
    } finally {
      await temporal.stop();
    }
  }
  results.starts = starts;
  (results.machine as Record<string, unknown>).loadAverageAtEnd = loadavg().map((x) => Math.round(x * 10) / 10);
  return results;
}
