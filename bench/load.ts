import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pinProcessesOf } from './guard.js';

/**
 * What one load run sends: paths rotated, fixed headers, and optional per-path headers. Every
 * request comes through a trusted proxy (X-Forwarded-For) from one of `clients` client addresses,
 * starting at the `clientOffset`-th (bench/load.ts clientAddress), taken in turn.
 */
export interface LoadSpec {
  base: string;
  paths: string[];
  headers?: Record<string, string>;
  perPath?: Array<Record<string, string>>;
  connections: number;
  seconds: number;
  clientOffset?: number;
  /** How many distinct clients send the load (default 1,000). */
  clients?: number;
  /** GET unless set; `body` is sent with every request (wrk only). */
  method?: 'GET' | 'POST';
  body?: string;
  /** Bodies sent in turn instead of one `body`, one path only (wrk only): the cycle is their number. */
  bodies?: string[];
}

export interface Load {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers with a status of 400 or more (wrk's count; a 304 is not counted). */
  non2xx: number;
  errors: number;
}

/**
 * How many distinct clients a load of `seconds` at up to `maxPerSecond` needs so that none passes
 * a per-minute limit of `perMinute` (each stays under 80 % of it): the limiter then answers every
 * request from an entry it already holds, as it does for a real population of clients each
 * within its budget, instead of creating (and, past its capacity, evicting) one per request.
 */
export const clientsWithinLimit = (perMinute: number, seconds: number, maxPerSecond: number): number =>
  Math.ceil((maxPerSecond * seconds) / (perMinute * 0.8));

const wrkPath = '/usr/bin/wrk';
const tasksetPath = '/usr/bin/taskset';
/** Pinning needs two cores: the server on the first, the load generator on the second. */
export const pinning = existsSync(tasksetPath) && cpus().length >= 2;

/**
 * Pins this (serving) process, every thread of it, to core 0 while `work` runs, and then lets it
 * run anywhere again; the load generator runs on core 1 (loadFromChild). Without taskset or a
 * second core it only runs `work`.
 */
export async function pinnedServer<T>(work: () => Promise<T>): Promise<T> {
  if (!pinning) return work();
  const all = `0-${cpus().length - 1}`;
  execFileSync(tasksetPath, ['-a', '-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  try {
    return await work();
  } finally {
    execFileSync(tasksetPath, ['-a', '-p', '-c', all, String(process.pid)], { stdio: 'ignore' });
  }
}

/** The Temporal CLI this run's dev server runs (TEMPORAL_CLI_PATH, `temporal` on PATH, or the cached build). */
export async function temporalCliPath(): Promise<string> {
  const { ensureTemporalCli } = await import('../runtime/temporal-cli.js');
  return ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH });
}

/**
 * Moves the Temporal dev server (every process of the CLI this run used) to the load generator's
 * core, and answers their pids; throws when no such process runs (bench/guard.ts). Without
 * pinning (no taskset or one core) it pins nothing and answers an empty list.
 */
export async function pinTemporalToLoadCore(): Promise<string[]> {
  if (!pinning) return [];
  return pinProcessesOf(await temporalCliPath(), pinToLoadCore);
}

/** Moves processes, every thread of them, to the load generator's core (no-op without pinning). */
export function pinToLoadCore(pids: readonly string[]): void {
  if (!pinning) return;
  for (const pid of pids) execFileSync(tasksetPath, ['-a', '-p', '-c', '1', pid], { stdio: 'ignore' });
}

/** Lets processes run on any core again. */
export function unpin(pids: readonly string[]): void {
  if (!pinning) return;
  for (const pid of pids) execFileSync(tasksetPath, ['-a', '-p', '-c', `0-${cpus().length - 1}`, pid], { stdio: 'ignore' });
}

/**
 * Runs the load in another process and returns its numbers: Debian's wrk (one thread, pinned to
 * core 1 when there are two) with a Lua script that rotates the paths, headers and client
 * addresses, written to a temporary file; or, without wrk, autocannon in a Node child
 * (bench/load-child.ts).
 */
export function loadFromChild(spec: LoadSpec): Promise<Load> {
  const dir = mkdtempSync(join(tmpdir(), 'malipo-wrk-'));
  if (!existsSync(wrkPath)) {
    // The spec in a file: tens of thousands of bodies do not fit in a command line (E2BIG).
    const specFile = join(dir, 'spec.json');
    writeFileSync(specFile, JSON.stringify(spec));
    const node = [process.execPath, 'bin/run-ts.mjs', 'bench/load-child.ts', specFile];
    const [cmd, ...args] = pinning ? [tasksetPath, '-c', '1', ...node] : node;
    return runChild(cmd!, args).finally(() => rmSync(dir, { recursive: true, force: true }));
  }
  const script = join(dir, 'load.lua');
  writeFileSync(script, wrkScript(spec));
  const wrk = [wrkPath, '-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--timeout', '10s', '-s', script, spec.base];
  const [cmd, ...args] = pinning ? [tasksetPath, '-c', '1', ...wrk] : wrk;
  return runChild(cmd!, args).finally(() => rmSync(dir, { recursive: true, force: true }));
}

function runChild(cmd: string, args: string[]): Promise<Load> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as Load) : reject(new Error(`load child exited ${code}`))));
  });
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The requests of one run, formatted once in wrk's `init` (the cycle of path and client pairs),
 * then sent in turn; `done` prints the result as one JSON line.
 */
function wrkScript(spec: LoadSpec): string {
  const clients = spec.clients ?? 1_000;
  const offset = spec.clientOffset ?? 0;
  const pairs = (spec.paths.length * clients) / gcd(spec.paths.length, clients);
  if (spec.bodies && spec.paths.length !== 1) throw new Error('load: `bodies` goes with one path');
  const cycle = spec.bodies ? spec.bodies.length : pairs <= 200_000 ? pairs : Math.max(spec.paths.length, clients);
  const lua = (v: string) => JSON.stringify(v); // a JSON string of ASCII is a valid Lua string literal
  const table = (o: Record<string, string> | undefined) => `{${Object.entries(o ?? {}).map(([k, v]) => `[${lua(k)}]=${lua(v)}`).join(',')}}`;
  return `
local paths = {${spec.paths.map(lua).join(',')}}
local bodies = {${(spec.bodies ?? []).map(lua).join(',')}}
local perPath = {${spec.paths.map((_, i) => table(spec.perPath?.[i])).join(',')}}
local fixed = ${table(spec.headers)}
local reqs = {}
local n = ${cycle}
local i = 0
local function client(k)
  return string.format("10.%d.%d.%d", math.floor(k / 65536) % 256, math.floor(k / 256) % 256, k % 256)
end
init = function(args)
  for j = 0, n - 1 do
    local p = j % #paths + 1
    local h = {}
    h["x-forwarded-for"] = client(${offset} + j % ${clients})
    for k, v in pairs(fixed) do h[k] = v end
    for k, v in pairs(perPath[p]) do h[k] = v end
    local body = ${spec.body === undefined ? 'nil' : lua(spec.body)}
    if #bodies > 0 then body = bodies[j + 1] end
    reqs[j + 1] = wrk.format(${lua(spec.method ?? 'GET')}, paths[p], h, body)
  end
end
request = function()
  i = i % n + 1
  return reqs[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"reqPerSec":%d,"p50Ms":%.1f,"p99Ms":%.1f,"non2xx":%d,"errors":%d}\\n',
    math.floor(summary.requests / (summary.duration / 1e6) + 0.5), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.status, e.connect + e.read + e.write + e.timeout))
end
`;
}

/** The median run by throughput. */
export const median = <T extends { reqPerSec: number }>(xs: T[]): T => [...xs].sort((a, b) => a.reqPerSec - b.reqPerSec)[xs.length >> 1]!;

/** The event-loop delay of this process while one load ran (ms, from the histogram's nanoseconds). */
export interface EventLoopDelay {
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

/**
 * Runs `work` with `monitorEventLoopDelay({ resolution: 10 })` enabled for exactly its duration, and
 * adds that window's p99 and max to its result. Call it in the process that serves the app. Node 20
 * records the whole interval between samples, so an idle loop already reads about 10–13 ms.
 */
export async function withEventLoopDelay<T extends object>(work: () => Promise<T>): Promise<T & EventLoopDelay> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  try {
    const result = await work();
    h.disable();
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    return { ...result, eventLoopP99Ms: ms(h.percentile(99)), eventLoopMaxMs: ms(h.max) };
  } finally {
    h.disable();
  }
}

const pct = (a: number[], p: number) => Math.round([...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))]! * 10) / 10;

/** Runs `call` `total` times, `concurrency` at a time, in this process: throughput and latency percentiles. */
export async function runConcurrently(concurrency: number, total: number, call: (i: number) => Promise<void>) {
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const s = performance.now();
        await call(i);
        lat.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  return { concurrency, total, perSecond: Math.round(total / seconds), p50Ms: pct(lat, 0.5), p99Ms: pct(lat, 0.99) };
}

/**
 * The n-th distinct client address (10.x.y.z), sent through a trusted proxy (X-Forwarded-For): the
 * same numbering as the wrk script's.
 */
export const clientAddress = (n: number): string => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

/** User + system CPU of a process so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms); 0 once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
