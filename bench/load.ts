import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** What one load run sends: paths rotated, fixed headers, and optional per-path headers. */
export interface LoadSpec {
  base: string;
  paths: string[];
  headers?: Record<string, string>;
  perPath?: Array<Record<string, string>>;
  connections: number;
  seconds: number;
  clientOffset?: number;
}

export interface Load {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

/** Runs the load from a child process (bench/load-child.ts) and returns its numbers. */
export function loadFromChild(spec: LoadSpec): Promise<Load> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/run-ts.mjs', 'bench/load-child.ts', JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as Load) : reject(new Error(`load child exited ${code}`))));
  });
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
 * The n-th distinct client address (10.x.y.z): a bench sends each request as another client,
 * through a trusted proxy (X-Forwarded-For), so per-IP limits count it but never refuse it.
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
