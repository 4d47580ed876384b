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
 * N API and N worker processes sharing one environment (DATABASE_URL, TEMPORAL_ADDRESS,
 * REDIS_URL, ENCRYPTION_KEY, …): the `api` and `worker` services of docker-compose.yml, each
 * replica a process.
 */
export async function startAppGroup(opts: {
  apiPorts: number[];
  workers: number;
  env: Record<string, string | undefined>;
  onLine?: AppProcessOptions['onLine'];
  onExit?: AppProcessOptions['onExit'];
}): Promise<AppGroup> {
  const apis: AppProcess[] = [];
  const workers: AppProcess[] = [];
  const started = () => [...apis, ...workers];
  let workerSeq = 0;
  let apiSeq = 0;
  const addWorker = async () => {
    const p = await startAppProcess({ kind: 'worker', name: `worker-${++workerSeq}`, env: opts.env, onLine: opts.onLine, onExit: opts.onExit });
    workers.push(p);
    return p;
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
