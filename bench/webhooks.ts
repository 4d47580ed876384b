// Webhook delivery benchmark (`npm run bench webhooks`, or `node bin/run-ts.mjs bench/webhooks.ts [--events 100] [--endpoints 10] [--per-endpoint 300] [--memory]`).
// Runs the real pieces in one process (Temporal dev server, PostgreSQL test database, workers,
// API) against a local receiver, and prints one JSON object:
//   - confirmation → first attempt: a simulated test payment confirms a real payment link; from
//     the link's confirmedAt to the receiver getting the first attempt of payment_link.confirmed;
//   - dispatch → first attempt: the `dispatchEvent` activity call (what the workflows make right
//     after committing an event) to the receiver getting the first attempt, one event at a time;
//   - throughput: many events to many endpoints dispatched at once, deliveries per second until
//     the last one arrived.
// Needs the test PostgreSQL (TEST_DATABASE_URL, default postgres://$USER@127.0.0.1:5432/test).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { freePort } from '../test/helpers/ports.js';
import { createWebhookActivities } from '../activities/webhooks/index.js';
import { taskQueueName } from '../domain/task-queues.js';
import { systemCheck } from '../workflows/index.js';
import { insertEvent } from '../db/event-repo.js';
import type { CreatedStore } from '../db/store-repo.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { searchAttributeArgs, startEmbeddedTemporal, stopChild, waitForPort } from '../runtime/embedded-temporal.js';
import { ensureTemporalCli } from '../runtime/temporal-cli.js';
import { expectOk, machine, machineLine } from './guard.js';

// The machine first, on stderr (stdout carries the one JSON result bench/index.ts reads).
console.error(machineLine());

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const latencyEvents = arg('events', 100);
const endpointCount = arg('endpoints', 10);
const eventsPerEndpoint = arg('per-endpoint', 300);

/** Arrival time (performance.now) of the first attempt of each webhook-id at each path. */
const arrivals = new Map<string, number>();
/** Wall-clock arrival (Date.now) of each confirmed link's first attempt, by link id. */
const confirmedArrivals = new Map<string, number>();
const receiver = createServer((req, res) => {
  const at = performance.now();
  const wall = Date.now();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const key = `${req.url} ${req.headers['webhook-id']}`;
    if (!arrivals.has(key)) arrivals.set(key, at);
    if (req.url === '/confirmed') {
      const linkId = JSON.parse(Buffer.concat(chunks).toString('utf8')).data.id as string;
      if (!confirmedArrivals.has(linkId)) confirmedArrivals.set(linkId, wall);
    }
    res.writeHead(200).end();
  });
});

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 1));
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const round = (n: number) => Math.round(n * 10) / 10;

async function addEndpoint(stack: Stack, store: CreatedStore, url: string): Promise<void> {
  const res = await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey, payload: { url } });
  if (res.status !== 201) throw new Error(`endpoint creation failed: ${res.text}`);
}

function newEvent(stack: Stack, store: CreatedStore, n: number) {
  return insertEvent(stack.pool, {
    storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: `bench:${store.clientId}:${n}`,
    data: { id: `pl_${n}`, status: 'CONFIRMED', usdtAmount: '10', merchantRef: `order-${n}`, metadata: { n } }, createdAt: new Date().toISOString(),
  });
}

/**
 * The baseline on the same server in the same run: a workflow that runs one activity reading
 * PostgreSQL (`systemCheck`), started as many times as there are deliveries (at most 400: its rate is what counts), 20 in flight.
 */
async function measureBaseline(stack: Stack, count: number) {
  const taskQueue = taskQueueName(stack.config.temporal.taskQueuePrefix, 'webhooks');
  const t0 = performance.now();
  const handles = [];
  for (let i = 0; i < count; i += 20) {
    handles.push(...(await Promise.all(Array.from({ length: Math.min(20, count - i) }, (_, j) =>
      stack.temporal.workflow.start(systemCheck, { taskQueue, workflowId: `bench-baseline/${i + j}/${Date.now()}` })))));
  }
  await Promise.all(handles.map((h) => h.result()));
  const seconds = (performance.now() - t0) / 1000;
  return { workflows: count, seconds: round(seconds), workflowsPerSecond: Math.round(count / seconds) };
}

/** Baseline latency: start of a `systemCheck` workflow to its result, one at a time. */
async function measureBaselineLatency(stack: Stack, count: number) {
  const taskQueue = taskQueueName(stack.config.temporal.taskQueuePrefix, 'webhooks');
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await stack.temporal.workflow.execute(systemCheck, { taskQueue, workflowId: `bench-baseline-latency/${i}/${Date.now()}` });
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { workflows: count, p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)) };
}

async function measureLatency(stack: Stack, base: string, dispatch: (id: string) => Promise<unknown>) {
  const store = await stack.createStore('Latency');
  await addEndpoint(stack, store, `${base}/latency`);
  const delays: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < latencyEvents; i++) {
    const event = await newEvent(stack, store, i);
    const t0 = performance.now();
    await dispatch(event.id);
    calls.push(performance.now() - t0);
    const key = `/latency ${event.id}`;
    await waitUntil(() => arrivals.has(key), 30_000);
    delays.push(arrivals.get(key)! - t0);
  }
  delays.sort((a, b) => a - b);
  calls.sort((a, b) => a - b);
  return { events: latencyEvents, dispatchCallP50Ms: round(percentile(calls, 50)), p50Ms: round(percentile(delays, 50)), p95Ms: round(percentile(delays, 95)), p99Ms: round(percentile(delays, 99)), maxMs: round(delays.at(-1)!) };
}

/**
 * The whole path through the real payment-link workflow: a test payment is simulated, the
 * workflow confirms the link (writing the event in the same transaction) and calls
 * `dispatchEvent`; measured from the event's `createdAt` (the link's `confirmedAt`, taken in the
 * workflow) to the receiver seeing the first attempt.
 */
async function measureConfirmation(stack: Stack, base: string, count: number) {
  const store = await stack.createStore('Confirmation');
  await connectAllRails(stack, store.clientId, 'test');
  await addEndpoint(stack, store, `${base}/confirmed`);
  const key = store.keys.test.secretKey;
  const delays: number[] = [];
  for (let i = 0; i < count; i++) {
    const link = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '1', enabledRails: ['USDT_BSC'] } });
    expectOk('webhooks: POST /v1/payment-links', link);
    const paid = await stack.request({ method: 'POST', url: `/v1/payment-links/${link.body.id}/simulate-payment`, key, payload: { rail: 'USDT_BSC' } });
    expectOk(`webhooks: POST /v1/payment-links/${link.body.id}/simulate-payment`, paid);
    if (paid.body.status !== 'CONFIRMED') throw new Error(`simulate failed: ${paid.text}`);
    await waitUntil(() => confirmedArrivals.has(link.body.id), 30_000);
    delays.push(confirmedArrivals.get(link.body.id)! - Date.parse(paid.body.confirmedAt));
  }
  delays.sort((a, b) => a - b);
  return { links: count, p50Ms: percentile(delays, 50), p95Ms: percentile(delays, 95), p99Ms: percentile(delays, 99), maxMs: delays.at(-1)! };
}

async function measureThroughput(stack: Stack, base: string, dispatch: (id: string) => Promise<unknown>) {
  const store = await stack.createStore('Throughput');
  for (let e = 0; e < endpointCount; e++) await addEndpoint(stack, store, `${base}/tp/${e}`);
  const events = [];
  for (let i = 0; i < eventsPerEndpoint; i++) events.push(await newEvent(stack, store, i));
  const expected = endpointCount * eventsPerEndpoint;
  const isThroughput = (k: string) => k.startsWith('/tp/');
  const t0 = performance.now();
  // Dispatch as the link workflows would: many events at once, 20 `dispatchEvent` activity calls in
  // flight, called in this process as a worker runs them (the task handoff is per event, not per delivery).
  for (let i = 0; i < events.length; i += 20) await Promise.all(events.slice(i, i + 20).map((e) => dispatch(e.id)));
  const dispatchedMs = performance.now() - t0;
  await waitUntil(() => [...arrivals.keys()].filter(isThroughput).length >= expected, 300_000);
  const lastArrival = Math.max(...[...arrivals.entries()].filter(([k]) => isThroughput(k)).map(([, v]) => v));
  const seconds = (lastArrival - t0) / 1000;
  return { endpoints: endpointCount, events: eventsPerEndpoint, deliveries: expected, dispatchMs: Math.round(dispatchedMs), seconds: round(seconds), deliveriesPerSecond: Math.round(expected / seconds) };
}

/**
 * The same Temporal dev server `malipo start` embeds (SQLite file under a temporary directory),
 * or with `--memory` the in-memory dev server the test suite uses.
 */
async function startMemoryTemporal(opts: { cliPath: string; port: number; uiPort: number; namespace: string }) {
  const child = spawn(opts.cliPath, ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port), '--headless',
    '--namespace', opts.namespace, '--log-level', 'error', ...searchAttributeArgs()], { stdio: 'ignore' });
  await waitForPort(opts.port, 60_000, () => undefined);
  return { address: `127.0.0.1:${opts.port}`, stop: () => stopChild(child) };
}
const memory = process.argv.includes('--memory');
const dataDir = await mkdtemp(join(tmpdir(), 'malipo-bench-'));
const temporal = await (memory ? startMemoryTemporal : startEmbeddedTemporal)({
  cliPath: await ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH, log: (m) => console.error(m) }),
  dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default',
});
process.env.MALIPO_TEST_TEMPORAL_ADDRESS = temporal.address;
const stack = await startStack({ LOG_LEVEL: 'silent', WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback' }); // the receiver is on 127.0.0.1
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
try {
  const { dispatchEvent } = createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config: stack.config });
  const dispatch = (eventId: string) => dispatchEvent({ eventId });
  const confirmation = await measureConfirmation(stack, base, Math.min(latencyEvents, 50));
  const latency = await measureLatency(stack, base, dispatch);
  const throughput = await measureThroughput(stack, base, dispatch);
  const baseline = { ...(await measureBaseline(stack, Math.min(throughput.deliveries, 400))), startToResult: await measureBaselineLatency(stack, latencyEvents) };
  const ratio = round(throughput.deliveriesPerSecond / baseline.workflowsPerSecond);
  console.log(JSON.stringify({ machine: machine(), node: process.version, cpus: availableParallelism(), temporalStore: memory ? 'memory' : 'sqlite-file', confirmationToFirstAttempt: confirmation, dispatchToFirstAttempt: latency, throughput, baseline, ratio }, null, 2));
} finally {
  receiver.close();
  await stack.stop();
  await temporal.stop();
  await rm(dataDir, { recursive: true, force: true });
}
