import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stopChild } from '../embedded-temporal.js';

const malipoBin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'malipo.mjs');

/** One `malipo api` or `malipo worker` process of the topology. */
export interface AppProcess {
  name: string;
  kind: 'api' | 'worker';
  pid: number;
  /** The API's own address (APIs only). */
  url?: string;
  /** Where it serves its metrics, when started with WORKER_METRICS_PORT / TEMPORAL_METRICS_PORT. */
  metricsPorts: { own?: number; temporal?: number };
  child: ChildProcess;
  /** Resolves when the process has exited, however it ended. */
  exited: Promise<void>;
  /** Graceful stop (SIGTERM, then SIGKILL after the grace period). */
  stop(): Promise<void>;
}

export interface AppProcessOptions {
  kind: 'api' | 'worker';
  name: string;
  /** The environment it runs with (DATABASE_URL, TEMPORAL_ADDRESS, REDIS_URL, …); PORT for an API. */
  env: Record<string, string | undefined>;
  /** Each output line, for the runner to prefix and print (or a test to keep). */
  onLine?: (name: string, line: string) => void;
  /** Called when the process ends without `stop()` (a crash, a kill from outside). */
  onExit?: (name: string, code: number | null, signal: NodeJS.Signals | null) => void;
  startTimeoutMs?: number;
}

/**
 * Starts `node bin/malipo.mjs api|worker` in its own process group and resolves when it prints
 * that it runs. Its stdout and stderr go line by line to `onLine`.
 */
export async function startAppProcess(opts: AppProcessOptions): Promise<AppProcess> {
  const child = spawn(process.execPath, [malipoBin, opts.kind], {
    env: opts.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let ready = false;
  let stopRequested = false;
  let exitReason: string | undefined;
  const tail: string[] = [];
  const readyPromise = new Promise<void>((resolve) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        tail.push(line);
        if (tail.length > 40) tail.shift();
        if (!ready && line.startsWith('Malipo is running.')) {
          ready = true;
          resolve();
        }
        opts.onLine?.(opts.name, line);
      });
    }
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitReason = signal ?? `code ${code}`;
      if (!stopRequested) opts.onExit?.(opts.name, code, signal);
      resolve();
    });
  });
  const timeoutMs = opts.startTimeoutMs ?? 120_000;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    readyPromise.then(() => 'ready' as const),
    exited.then(() => 'exited' as const),
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (outcome !== 'ready') {
    stopRequested = true;
    await stopChild(child, 2_000);
    const why = outcome === 'exited' ? `exited (${exitReason})` : `did not start within ${timeoutMs} ms`;
    throw new Error(`${opts.name} (malipo ${opts.kind}) ${why}:\n${tail.join('\n')}`);
  }
  const port = opts.env.PORT;
  return {
    name: opts.name,
    kind: opts.kind,
    pid: child.pid!,
    url: opts.kind === 'api' && port ? `http://127.0.0.1:${port}` : undefined,
    metricsPorts: { own: portOf(opts.env.WORKER_METRICS_PORT), temporal: portOf(opts.env.TEMPORAL_METRICS_PORT) },
    child,
    exited,
    stop: () => {
      stopRequested = true;
      return stopChild(child, 15_000);
    },
  };
}

const portOf = (value: string | undefined) => (value ? Number(value) : undefined);
