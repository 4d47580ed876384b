// Webhook delivery benchmark (`npm run bench webhooks`, or `node bin/run-ts.mjs bench/webhooks.ts [--events 100] [--endpoints 10] [--per-endpoint 300] [--memory]`).
// `--profile` adds a sampled CPU profile of the bench's process over each throughput phase.
// Runs the real pieces in one process (Temporal dev server, PostgreSQL test database, workers with
// their outbox relay, API) against a local receiver, and prints one JSON object:
//   - confirmation → first attempt: a simulated test payment confirms a real payment link; from
//     the link's confirmedAt to the receiver getting the first attempt of payment_link.confirmed;
//   - commit → first attempt: an event committed to the outbox, one at a time, to the receiver
//     getting its first attempt from the relay (worker/webhook-relay.ts), which nothing calls;
//   - throughput through the relay: many events to many endpoints, committed together as many
//     confirming activities commit them (20 per transaction, 10 transactions at once), and sent by
//     the stack's workers' relay as in production; deliveries per second from the first commit until
//     the last one arrived and every event was marked dispatched; with the CPU each process spent;
//   - throughput in process: the same fan-out called as a function on events claimed ahead (no
//     relay, no polling), the ceiling the relay is compared with.
// Any delivery not logged as a 2xx, any event left to a retry workflow, and any setup step that
// did not happen ends the bench with a non-zero exit (bench/guard.ts).
// Needs the test PostgreSQL (TEST_DATABASE_URL, default postgres://$USER@127.0.0.1:5432/test).
import { spawn } from 'node:child_process';
import { sql } from 'slonik';
import { z } from 'zod';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { freePort } from '../test/helpers/ports.js';
import { createFanOut } from '../activities/webhooks/dispatch.js';
import { taskQueueName } from '../domain/task-queues.js';
import { systemCheck } from '../workflows/index.js';
import { claimEvent, insertEvent, type StoredEvent } from '../db/event-repo.js';
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
/** First attempts arrived per path prefix (`/<phase>/`) and the last one's time: read without scanning `arrivals`. */
const arrivedUnder = new Map<string, { count: number; last: number }>();
/** Wall-clock arrival (Date.now) of each confirmed link's first attempt, by link id. */
const confirmedArrivals = new Map<string, number>();
const receiver = createServer((req, res) => {
  const at = performance.now();
  const wall = Date.now();
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const key = `${req.url} ${req.headers['webhook-id']}`;
    if (!arrivals.has(key)) {
      arrivals.set(key, at);
      const prefix = (req.url ?? '').slice(0, (req.url ?? '').indexOf('/', 1) + 1);
      const seen = arrivedUnder.get(prefix) ?? { count: 0, last: 0 };
      arrivedUnder.set(prefix, { count: seen.count + 1, last: Math.max(seen.last, at) });
    }
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

function newEvent(db: Parameters<typeof insertEvent>[0], store: CreatedStore, n: number) {
  return insertEvent(db, {
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

/** An event committed to the outbox, one at a time, to its first attempt arriving: the relay's pick-up and the fan-out. */
async function measureCommitLatency(stack: Stack, base: string) {
  const store = await stack.createStore('Latency');
  await addEndpoint(stack, store, `${base}/latency`);
  const delays: number[] = [];
  for (let i = 0; i < latencyEvents; i++) {
    const event = await newEvent(stack.pool, store, i);
    const t0 = performance.now();
    const key = `/latency ${event.id}`;
    await waitUntil(() => arrivals.has(key), 30_000);
    delays.push(arrivals.get(key)! - t0);
  }
  delays.sort((a, b) => a - b);
  return { events: latencyEvents, relayPollMs: stack.config.webhooks.relay.pollMs, p50Ms: round(percentile(delays, 50)), p95Ms: round(percentile(delays, 95)), p99Ms: round(percentile(delays, 99)), maxMs: round(delays.at(-1)!) };
}

/**
 * The whole path through the real payment-link workflow: a test payment is simulated, the
 * workflow confirms the link (writing the event in the same transaction) and the relay sends it;
 * measured from the event's `createdAt` (the link's `confirmedAt`, taken in the
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

/** A store with `endpointCount` endpoints at the receiver; `claimed`: its events written and claimed ahead (the in-process phase), else none written. */
async function throughputStore(stack: Stack, base: string, name: string, claimed: boolean) {
  const store = await stack.createStore(name);
  for (let e = 0; e < endpointCount; e++) await addEndpoint(stack, store, `${base}/${name}/${e}`);
  const events: StoredEvent[] = [];
  // Claimed for an hour in the transaction that writes them: the stack's relay never takes them.
  if (claimed) {
    for (let i = 0; i < eventsPerEndpoint; i++) {
      events.push(await stack.pool.transaction(async (tx) => {
        const e = await newEvent(tx, store, i);
        if ((await claimEvent(tx, e.id, 3600)).status !== 'claimed') throw new Error(`in process: event ${e.id} not claimed ahead`);
        return e;
      }));
    }
  }
  return { store, events, expected: endpointCount * eventsPerEndpoint, prefix: `/${name}/` };
}

/** Waits until none of these events is left undispatched. */
async function allDispatched(stack: Stack, ids: readonly string[]): Promise<void> {
  const left = () => stack.pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM events WHERE id = ANY(${sql.array(ids, 'text')}) AND dispatched_at IS NULL`);
  const deadline = Date.now() + 300_000;
  while ((await left()) > 0) {
    if (Date.now() > deadline) throw new Error('events left undispatched after 300 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Fails unless no delivery workflow (the retry schedule) was started for these events: every first attempt went out inline. */
async function expectNoRetries(stack: Stack, what: string, events: readonly StoredEvent[]): Promise<void> {
  const ids = new Set(events.map((e) => e.id));
  let retrying = 0;
  for await (const w of stack.temporal.workflow.list({ query: `WorkflowType = 'webhookDelivery'` })) {
    if (ids.has(w.workflowId.split('/')[1] ?? '')) retrying++;
  }
  if (retrying !== 0) throw new Error(`${what}: ${retrying} deliveries left to retry workflows, expected none (the receiver answers 200)`);
}

/** The last arrival at `prefix`, once `expected` webhook-ids arrived there. */
async function lastArrivalAt(prefix: string, expected: number): Promise<number> {
  // Checked every millisecond: a count, not a scan of every arrival (which took 8 % of the process).
  await waitUntil(() => (arrivedUnder.get(prefix)?.count ?? 0) >= expected, 300_000);
  return arrivedUnder.get(prefix)!.last;
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
  const profileOut = process.argv.indexOf('--profile-out');
  const profile = await profiler?.stop(profileOut > 0 ? `${process.argv[profileOut + 1]}-${deliveries}-${Date.now()}.cpuprofile` : undefined);
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

/**
 * Throughput through the outbox relay, as production runs it: the events are committed at the
 * start (20 per transaction, 10 transactions at once, as confirming activities commit them), and
 * the stack's workers' relay claims and sends them; nothing else is called.
 */
async function measureRelay(stack: Stack, base: string) {
  const { store, expected, prefix } = await throughputStore(stack, base, 'relay', false);
  const events: StoredEvent[] = [];
  const measured = await withCpu(expected, async () => {
    const t0 = performance.now();
    const batches = Array.from({ length: Math.ceil(eventsPerEndpoint / 20) }, (_, b) => b);
    for (let i = 0; i < batches.length; i += 10) {
      const written = await Promise.all(batches.slice(i, i + 10).map((b) => stack.pool.transaction(async (tx) => {
        const out: StoredEvent[] = [];
        for (let n = b * 20; n < Math.min(eventsPerEndpoint, b * 20 + 20); n++) out.push(await newEvent(tx, store, n));
        return out;
      })));
      events.push(...written.flat());
    }
    const committedMs = performance.now() - t0;
    const last = await lastArrivalAt(prefix, expected);
    await allDispatched(stack, events.map((e) => e.id));
    const doneMs = performance.now() - t0;
    return { seconds: (Math.max(last, t0 + doneMs) - t0) / 1000, committedMs };
  });
  const { seconds, committedMs } = measured.result;
  console.error(`${new Date().toISOString()} committed in ${Math.round(committedMs)} ms, last arrival and marks after ${round(seconds)} s`, measured.cpu);
  await expectAllSucceeded(stack, 'relay', events.map((e) => e.id), expected);
  await expectNoRetries(stack, 'relay', events);
  return {
    endpoints: endpointCount, events: eventsPerEndpoint, deliveries: expected, committedMs: Math.round(committedMs),
    seconds: round(seconds), deliveriesPerSecond: Math.round(expected / seconds), ...measured.cpu, ...(measured.profile ? { profile: measured.profile } : {}),
  };
}

/** The same fan-out called in this process on events claimed ahead, 50 per call and 4 calls at once as the relay runs them: no polling, no claims. */
async function measureInProcess(stack: Stack, base: string, fanOut: (events: readonly StoredEvent[]) => Promise<Array<{ sent: number }>>) {
  const { events, expected, prefix } = await throughputStore(stack, base, 'inprocess', true);
  const measured = await withCpu(expected, async () => {
    const t0 = performance.now();
    const batches = Array.from({ length: Math.ceil(events.length / 50) }, (_, b) => events.slice(b * 50, b * 50 + 50));
    const results: Array<{ sent: number }> = [];
    for (let i = 0; i < batches.length; i += 4) results.push(...(await Promise.all(batches.slice(i, i + 4).map(fanOut))).flat());
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
try {
  const { fanOutEvents } = createFanOut({ pool: stack.pool, temporal: stack.temporal, config: stack.config });
  const fanOut = (events: readonly StoredEvent[]) => fanOutEvents(events, true);
  const phase = (name: string) => console.error(`${new Date().toISOString()} ${name}`);
  if (throughputOnly) {
    phase('throughput through the relay');
    const throughput = await measureRelay(stack, base);
    phase('throughput in process');
    const inProcess = await measureInProcess(stack, base, fanOut);
    console.log(JSON.stringify({ machine: machine(), loadAverage: loadavg().map(round), temporalStore: memory ? 'memory' : 'sqlite-file', throughput, inProcess }, null, 2));
  } else {
    phase('confirmation');
    const confirmation = await measureConfirmation(stack, base, Math.min(latencyEvents, 50));
    phase('commit latency');
    const latency = await measureCommitLatency(stack, base);
    phase('throughput through the relay');
    const throughput = await measureRelay(stack, base);
    phase('throughput in process');
    const inProcess = await measureInProcess(stack, base, fanOut);
    phase('baseline workflows');
    const baseline = { ...(await measureBaseline(stack, Math.min(throughput.deliveries, 400))), startToResult: await measureBaselineLatency(stack, latencyEvents) };
    const ratio = round(throughput.deliveriesPerSecond / baseline.workflowsPerSecond);
    console.log(JSON.stringify({
      machine: machine(), node: process.version, cpus: availableParallelism(), loadAverage: loadavg().map(round), temporalStore: memory ? 'memory' : 'sqlite-file',
      confirmationToFirstAttempt: confirmation, commitToFirstAttempt: latency, throughput, inProcess, baseline, ratio,
    }, null, 2));
  }
} finally {
  receiver.close();
  await stack.stop();
  await temporal.stop();
  await rm(dataDir, { recursive: true, force: true });
}
