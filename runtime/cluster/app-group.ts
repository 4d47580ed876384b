import { startAppProcess, type AppProcess, type AppProcessOptions } from './app-processes.js';

export interface AppGroup {
  apis: AppProcess[];
  workers: AppProcess[];
  /** Starts one more worker (numbered after the last). */
  addWorker(): Promise<AppProcess>;
  /** Starts one more API on `port`. */
  addApi(port: number): Promise<AppProcess>;
  /**
   * Replaces every process with a fresh one running the code now on disk, one at a time: a new
   * worker starts before an old one stops (capacity never drops), and each API stops and starts
   * again on its port while the others serve. Open links carry on: their workflows live in Temporal.
   */
  roll(log?: (msg: string) => void): Promise<void>;
  /** APIs first (no new work comes in), then workers (they finish their tasks within the grace time). */
  stop(): Promise<void>;
}

/**
 * A worker's metrics ports in `npm run start:cluster` (CLUSTER_METRICS_PORT): slot `i` serves its
 * own registry on base+2i and the Temporal SDK's exporter on base+2i+1, so two workers on one
 * machine never ask for the same port.
 */
export function workerMetricsEnv(base: number | undefined, slot: number): Record<string, string> {
  if (base === undefined) return {};
  return { WORKER_METRICS_PORT: String(base + 2 * slot), TEMPORAL_METRICS_PORT: String(base + 2 * slot + 1) };
}

/**
 * The lowest slot no running worker holds. A rolling restart starts the new worker before it stops
 * the old one, so N workers use slots 0 … N (one spare), and each replacement takes the slot the
 * previous one freed: the scrape targets stay the same N+1 addresses.
 */
export function freeWorkerSlot(taken: Iterable<number>): number {
  const used = new Set(taken);
  let slot = 0;
  while (used.has(slot)) slot++;
  return slot;
}

/**
 * N API and N worker processes sharing one environment (DATABASE_URL, TEMPORAL_ADDRESS,
 * REDIS_URL, ENCRYPTION_KEY, …): the `api` and `worker` services of docker-compose.yml, each
 * replica a process.
 */
export async function startAppGroup(opts: {
  apiPorts: number[];
  workers: number;
  env: Record<string, string | undefined>;
  /** CLUSTER_METRICS_PORT: each worker gets its own metrics ports from here (workerMetricsEnv). */
  metricsBasePort?: number;
  onLine?: AppProcessOptions['onLine'];
  onExit?: AppProcessOptions['onExit'];
}): Promise<AppGroup> {
  const apis: AppProcess[] = [];
  const workers: AppProcess[] = [];
  const started = () => [...apis, ...workers];
  let workerSeq = 0;
  let apiSeq = 0;
  // Each worker's metrics slot, keyed by its process (or by a placeholder while it starts, so
  // workers started at once take different slots).
  const slots = new Map<object, number>();
  const addWorker = async () => {
    const starting = {};
    const slot = freeWorkerSlot(slots.values());
    slots.set(starting, slot);
    try {
      const env = { ...opts.env, ...workerMetricsEnv(opts.metricsBasePort, slot) };
      const p = await startAppProcess({ kind: 'worker', name: `worker-${++workerSeq}`, env, onLine: opts.onLine, onExit: opts.onExit });
      workers.push(p);
      slots.set(p, slot);
      return p;
    } finally {
      slots.delete(starting);
    }
  };
  const addApi = async (port: number) => {
    const p = await startAppProcess({ kind: 'api', name: `api-${++apiSeq}`, env: { ...opts.env, PORT: String(port) }, onLine: opts.onLine, onExit: opts.onExit });
    apis.push(p);
    return p;
  };
  // All at once: a worker bundles the workflow code (seconds of CPU); an API needs no worker
  // to accept work, since Temporal holds the tasks until a worker polls.
  const results = await Promise.allSettled([...Array.from({ length: opts.workers }, () => addWorker()), ...opts.apiPorts.map((port) => addApi(port))]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(started().map((p) => p.stop()));
    throw failed.reason;
  }
  return {
    apis,
    workers,
    addWorker,
    addApi,
    async roll(log) {
      for (const old of [...workers]) {
        const fresh = await addWorker();
        await old.stop();
        workers.splice(workers.indexOf(old), 1);
        slots.delete(old);
        log?.(`${fresh.name} (pid ${fresh.pid}) replaced ${old.name}`);
      }
      for (const old of [...apis]) {
        const port = Number(new URL(old.url!).port);
        await old.stop();
        apis.splice(apis.indexOf(old), 1);
        const fresh = await addApi(port);
        log?.(`${fresh.name} (pid ${fresh.pid}) replaced ${old.name} on port ${port}`);
      }
    },
    async stop() {
      await Promise.all(apis.map((p) => p.stop()));
      await Promise.all(workers.map((p) => p.stop()));
    },
  };
}
