// Webhook delivery benchmark (`npm run bench webhooks`, or `node bin/run-ts.mjs bench/webhooks.ts [--events 100] [--endpoints 10] [--per-endpoint 300] [--memory]`).
// `--profile` adds a sampled CPU profile of the bench's process over each throughput phase.
// Runs the real pieces in one process (Temporal dev server, PostgreSQL test database, workers,
// API) against a local receiver, and prints one JSON object:
//   - confirmation → first attempt: a simulated test payment confirms a real payment link; from
//     the link's confirmedAt to the receiver getting the first attempt of payment_link.confirmed;
//   - dispatch → first attempt: the `dispatchEvent` activity call (what the workflows make right
//     after committing an event) to the receiver getting the first attempt, one event at a time;
//   - throughput through the handover: many events to many endpoints, each handed to the fan-out
//     as production hands it over after the event commits (a running workflow schedules
//     `dispatchEvent` on the webhooks task queue; the stack's workers run it), deliveries per
//     second until the last one arrived and every handover completed; with the CPU each process
//     spent on it;
//   - throughput in process: the same fan-out called as a function in this process (no Temporal
//     on the path), the ceiling the handover is compared with.
// Any delivery not logged as a 2xx, any handover that left a delivery to a retry workflow, and any
// setup step that did not happen ends the bench with a non-zero exit (bench/guard.ts).
// Needs the test PostgreSQL (TEST_DATABASE_URL, default postgres://$USER@127.0.0.1:5432/test).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { sql } from 'slonik';
import { z } from 'zod';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { freePort } from '../test/helpers/ports.js';
import { createWebhookActivities } from '../activities/webhooks/index.js';
import { taskQueueName } from '../domain/task-queues.js';
import { systemCheck } from '../workflows/index.js';
import { insertEvent } from '../db/event-repo.js';
import type { CreatedStore } from '../db/store-repo.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack, type Stack } from '../test/helpers/stack.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { searchAttributeArgs, startEmbeddedTemporal, stopChild, waitForPort } from '../runtime/embedded-temporal.js';
import { ensureTemporalCli } from '../runtime/temporal-cli.js';
import { startCpuProfile } from './cpu-profile.js';
import { expectOk, machine, machineLine, pidsOfExecutable } from './guard.js';
import { benchEventHandover, eventCommittedSignal } from './webhook-handover-workflow.js';
import type { DispatchResult } from '../activities/webhooks/dispatch.js';

// The machine first, on stderr (stdout carries the one JSON result bench/index.ts reads).
console.error(machineLine());

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const latencyEvents = arg('events', 100);
const endpointCount = arg('endpoints', 10);
const eventsPerEndpoint = arg('per-endpoint', 300);
/** `--profile`: a sampled CPU profile of this process over each throughput phase, summarised in the output. */
const profiling = process.argv.includes('--profile');
/** `--throughput-only`: the two throughput phases alone (for profiling), without the latencies and the baseline. */
const throughputOnly = process.argv.includes('--throughput-only');

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

async function throughputStore(stack: Stack, base: string, name: string) {
  const store = await stack.createStore(name);
  for (let e = 0; e < endpointCount; e++) await addEndpoint(stack, store, `${base}/${name}/${e}`);
  const events = [];
  for (let i = 0; i < eventsPerEndpoint; i++) events.push(await newEvent(stack, store, i));
  return { store, events, expected: endpointCount * eventsPerEndpoint, prefix: `/${name}/` };
}

/** The last arrival at `prefix`, once `expected` webhook-ids arrived there. */
async function lastArrivalAt(prefix: string, expected: number): Promise<number> {
  const mine = () => [...arrivals.entries()].filter(([k]) => k.startsWith(prefix));
  await waitUntil(() => mine().length >= expected, 300_000);
  return Math.max(...mine().map(([, v]) => v));
}

/** Fails unless every first attempt of these events is logged as a 2xx, once per endpoint. */
async function expectAllSucceeded(stack: Stack, what: string, eventIds: readonly string[], expected: number): Promise<void> {
  const counts = await stack.pool.one(sql.type(z.object({ succeeded: z.number(), other: z.number() }))`
    SELECT (count(*) FILTER (WHERE status = 'succeeded'))::int AS succeeded, (count(*) FILTER (WHERE status <> 'succeeded'))::int AS other
    FROM webhook_deliveries WHERE event_id = ANY(${sql.array(eventIds, 'text')})`);
  if (counts.succeeded !== expected || counts.other !== 0) {
    throw new Error(`${what}: ${counts.succeeded} deliveries logged as 2xx and ${counts.other} otherwise, expected ${expected} 2xx and nothing else`);
  }
}

/** CPU seconds (user + system) of these processes so far, from /proc/<pid>/stat. */
function cpuSecondsOf(pids: readonly string[]): number {
  const tick = 100; // USER_HZ on Linux.
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / tick;
}

/** The CPU this process and the Temporal server spent while `run` ran, in ms per delivery. */
async function withCpu<T>(deliveries: number, run: () => Promise<T>) {
  const profiler = profiling ? await startCpuProfile() : undefined;
  const temporalPids = pidsOfExecutable(temporalCli, process.pid);
  if (temporalPids.length === 0) throw new Error(`no Temporal server started by this bench runs ${temporalCli}: its CPU would read 0`);
  const node0 = process.cpuUsage();
  const temporal0 = cpuSecondsOf(temporalPids);
  const load0 = loadavg()[0]!;
  const result = await run();
  const node = process.cpuUsage(node0);
  const profile = await profiler?.stop();
  const perDelivery = (seconds: number) => Math.round(((seconds * 1000) / deliveries) * 100) / 100;
  return {
    result,
    cpu: {
      nodeMsPerDelivery: perDelivery((node.user + node.system) / 1e6),
      temporalMsPerDelivery: perDelivery(cpuSecondsOf(temporalPids) - temporal0),
      loadAverage1m: [round(load0), round(loadavg()[0]!)],
    },
    profile,
  };
}

/** Milliseconds of a history event's time. */
const eventMs = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) =>
  Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

/**
 * Where a handover's time goes, read from the histories of `sample` workflows: the signal to the
 * dispatch activity's scheduling (a workflow task), scheduled to started (the activity task waiting
 * for a worker), started to completed (the fan-out itself), completed to the workflow's end
 * (another workflow task); medians, and the history events per handover.
 */
async function handoverTimeline(handles: readonly WorkflowHandle<typeof benchEventHandover>[], sample: number) {
  const spans: Record<'signalToScheduledMs' | 'scheduledToStartedMs' | 'startedToCompletedMs' | 'completedToClosedMs', number[]> = {
    signalToScheduledMs: [], scheduledToStartedMs: [], startedToCompletedMs: [], completedToClosedMs: [],
  };
  let events = 0;
  const step = Math.max(1, Math.floor(handles.length / sample));
  for (let i = 0; i < handles.length; i += step) {
    const history = (await handles[i]!.fetchHistory()).events ?? [];
    events += history.length;
    const at = (attr: string) => history.filter((e) => (e as Record<string, unknown>)[attr]).map(eventMs);
    const signal = at('workflowExecutionSignaledEventAttributes')[0]!;
    const scheduled = at('activityTaskScheduledEventAttributes')[0]!;
    const started = at('activityTaskStartedEventAttributes').at(-1)!;
    const completed = at('activityTaskCompletedEventAttributes')[0]!;
    const closed = at('workflowExecutionCompletedEventAttributes')[0]!;
    spans.signalToScheduledMs.push(scheduled - signal);
    spans.scheduledToStartedMs.push(started - scheduled);
    spans.startedToCompletedMs.push(completed - started);
    spans.completedToClosedMs.push(closed - completed);
  }
  const median = (xs: number[]) => round(xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  const count = spans.signalToScheduledMs.length;
  return {
    workflows: count, historyEventsPerHandover: round(events / count),
    ...Object.fromEntries(Object.entries(spans).map(([k, xs]) => [k, median(xs)])),
  };
}

/**
 * Throughput through Temporal's handover. One bench workflow per event (the stand-in for the
 * event's payment-link workflow) is started and left waiting before the clock starts, as link
 * workflows are running long before their event commits; then each is told its committed event
 * and hands it to `dispatchEvent` on the webhooks task queue, which the stack's workers run.
 */
async function measureHandover(stack: Stack, base: string, connection: NativeConnection) {
  const { events, expected, prefix } = await throughputStore(stack, base, 'handover');
  const webhookTaskQueue = taskQueueName(stack.config.temporal.taskQueuePrefix, 'webhooks');
  const taskQueue = `bench-handover-${process.pid}`;
  const worker = await Worker.create({ connection, namespace: 'default', taskQueue, workflowBundle: await handoverBundle(), maxCachedWorkflows: events.length + 10 });
  const running = worker.run();
  try {
    const handles: WorkflowHandle<typeof benchEventHandover>[] = [];
    for (let i = 0; i < events.length; i += 20) {
      handles.push(...(await Promise.all(events.slice(i, i + 20).map((_, j) =>
        stack.temporal.workflow.start(benchEventHandover, { taskQueue, workflowId: `bench-handover/${i + j}/${Date.now()}`, args: [{ webhookTaskQueue }] })))));
    }
    console.error(`${new Date().toISOString()} ${handles.length} handover workflows waiting`);
    const measured = await withCpu(expected, async () => {
      const t0 = performance.now();
      for (let i = 0; i < handles.length; i += 50) await Promise.all(handles.slice(i, i + 50).map((h, j) => h.signal(eventCommittedSignal, events[i + j]!.id)));
      const signalledMs = performance.now() - t0;
      const results: DispatchResult[] = await Promise.all(handles.map((h) => h.result()));
      const handedOverMs = performance.now() - t0;
      const last = await lastArrivalAt(prefix, expected);
      return { results, seconds: (Math.max(last, t0 + handedOverMs) - t0) / 1000, signalledMs, handedOverMs };
    });
    const { results, seconds, signalledMs, handedOverMs } = measured.result;
    console.error(`${new Date().toISOString()} handed over in ${Math.round(handedOverMs)} ms, last arrival after ${round(seconds)} s`, measured.cpu);
    const sent = results.reduce((n, r) => n + r.sent, 0);
    const retrying = results.reduce((n, r) => n + r.retrying, 0);
    if (retrying !== 0) throw new Error(`handover: ${retrying} deliveries left to retry workflows, expected none (the receiver answers 200)`);
    await expectAllSucceeded(stack, 'handover', events.map((e) => e.id), expected);
    const timeline = await handoverTimeline(handles, 30);
    // A dispatch that timed out runs again and settles what its first try logged, without sending it: counted apart.
    const settledByRetry = expected - sent;
    return {
      endpoints: endpointCount, events: eventsPerEndpoint, deliveries: expected, settledByRetry, signalMs: Math.round(signalledMs), allHandedOverMs: Math.round(handedOverMs),
      seconds: round(seconds), deliveriesPerSecond: Math.round(expected / seconds), ...measured.cpu, timeline, ...(measured.profile ? { profile: measured.profile } : {}),
    };
  } finally {
    worker.shutdown();
    await running;
  }
}

/** The bench workflow's bundle, built as the worker's is (our imports end in `.js`, the files in `.ts`). */
function handoverBundle() {
  return bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./webhook-handover-workflow.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never,
    webpackConfigHook: (config) => {
      config.resolve = { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } };
      return config;
    },
  });
}

/** The same fan-out called in this process, 20 events at once: no Temporal on the path. */
async function measureInProcess(stack: Stack, base: string, dispatch: (id: string) => Promise<DispatchResult>) {
  const { events, expected, prefix } = await throughputStore(stack, base, 'inprocess');
  const measured = await withCpu(expected, async () => {
    const t0 = performance.now();
    const results: DispatchResult[] = [];
    for (let i = 0; i < events.length; i += 20) results.push(...(await Promise.all(events.slice(i, i + 20).map((e) => dispatch(e.id)))));
    const last = await lastArrivalAt(prefix, expected);
    return { results, seconds: (last - t0) / 1000 };
  });
  const sent = measured.result.results.reduce((n, r) => n + r.sent, 0);
  if (sent !== expected) throw new Error(`in process: ${sent} first attempts sent, expected ${expected}`);
  await expectAllSucceeded(stack, 'in process', events.map((e) => e.id), expected);
  return { endpoints: endpointCount, events: eventsPerEndpoint, deliveries: expected, seconds: round(measured.result.seconds), deliveriesPerSecond: Math.round(expected / measured.result.seconds), ...measured.cpu, ...(measured.profile ? { profile: measured.profile } : {}) };
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
const temporalCli = await ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH, log: (m) => console.error(m) });
const temporal = await (memory ? startMemoryTemporal : startEmbeddedTemporal)({
  cliPath: temporalCli,
  dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default',
});
process.env.MALIPO_TEST_TEMPORAL_ADDRESS = temporal.address;
const stack = await startStack({ LOG_LEVEL: 'silent', WEBHOOK_TEST_ALLOWED_NETWORKS: 'loopback' }); // the receiver is on 127.0.0.1
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
const connection = await NativeConnection.connect({ address: temporal.address });
try {
  const { dispatchEvent } = createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config: stack.config });
  const dispatch = (eventId: string) => dispatchEvent({ eventId });
  const phase = (name: string) => console.error(`${new Date().toISOString()} ${name}`);
  if (throughputOnly) {
    phase('throughput through the handover');
    const throughput = await measureHandover(stack, base, connection);
    phase('throughput in process');
    const inProcess = await measureInProcess(stack, base, dispatch);
    console.log(JSON.stringify({ machine: machine(), loadAverage: loadavg().map(round), temporalStore: memory ? 'memory' : 'sqlite-file', throughput, inProcess }, null, 2));
  } else {
    phase('confirmation');
    const confirmation = await measureConfirmation(stack, base, Math.min(latencyEvents, 50));
    phase('dispatch latency');
    const latency = await measureLatency(stack, base, dispatch);
    phase('throughput through the handover');
    const throughput = await measureHandover(stack, base, connection);
    phase('throughput in process');
    const inProcess = await measureInProcess(stack, base, dispatch);
    phase('baseline workflows');
    const baseline = { ...(await measureBaseline(stack, Math.min(throughput.deliveries, 400))), startToResult: await measureBaselineLatency(stack, latencyEvents) };
    const ratio = round(throughput.deliveriesPerSecond / baseline.workflowsPerSecond);
    console.log(JSON.stringify({
      machine: machine(), node: process.version, cpus: availableParallelism(), loadAverage: loadavg().map(round), temporalStore: memory ? 'memory' : 'sqlite-file',
      confirmationToFirstAttempt: confirmation, dispatchToFirstAttempt: latency, throughput, inProcess, baseline, ratio,
    }, null, 2));
  }
} finally {
  receiver.close();
  await connection.close();
  await stack.stop();
  await temporal.stop();
  await rm(dataDir, { recursive: true, force: true });
}
