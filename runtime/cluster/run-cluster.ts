import { join } from 'node:path';
import { keyringFor } from '../../services/keyring.js';
import { migrate } from '../../db/migrate.js';
import type { Config } from '../../config/config.js';
import { startAppGroup, type AppGroup } from './app-group.js';
import type { AppProcess } from './app-processes.js';
import { ensureClusterBinaries } from './binaries.js';
import { isPortFree } from './ports.js';
import { databaseNameOf } from './postgres-target.js';
import { ensureDatabase } from './temporal-databases.js';
import { startTemporalCluster, type TemporalCluster } from './temporal-cluster.js';

const colours = [36, 33, 35, 32, 34, 31];
const say = (msg: string) => console.log(`\x1b[2mcluster |\x1b[0m ${msg}`);

/**
 * `npm run start:cluster`: the production topology on one machine. Temporal's server on the
 * PostgreSQL of DATABASE_URL, its UI (read-only, loopback), and `CLUSTER_API_PROCESSES` API and
 * `CLUSTER_WORKER_PROCESSES` worker processes sharing REDIS_URL. APIs listen on PORT, PORT+1, ….
 * Ctrl-C stops the APIs, then the workers, then the UI and Temporal; the next start reuses the
 * databases, the chosen ports and the built binaries. SIGUSR2 rolls every process onto the code
 * on disk (docs/production.md, "Upgrading the workflow code while links are open").
 */
export async function runCluster(config: Config, env: NodeJS.ProcessEnv): Promise<void> {
  const apiPorts = Array.from({ length: config.cluster.apiProcesses }, (_, i) => config.port + i);
  await refuseBadSetup(config, apiPorts);
  const databaseUrl = config.databaseUrl!;
  const binaries = await ensureClusterBinaries({
    serverPath: config.cluster.serverPath, sqlToolPath: config.cluster.sqlToolPath, uiServerPath: config.cluster.uiServerPath, log: say,
  });
  const appDatabase = databaseNameOf(databaseUrl);
  if (await ensureDatabase(databaseUrl, appDatabase)) say(`created the database ${appDatabase}`);
  const applied = await migrate(databaseUrl);
  if (applied.length) say(`applied ${applied.length} migrations to ${appDatabase}`);
  // Without ENCRYPTION_KEY, make the development key once here, before processes race to it.
  if (!config.encryptionKeys) {
    await keyringFor(config, 'test', () => say(`ENCRYPTION_KEY is not set: test-mode secrets use a development key in ${join(config.dataDir, 'encryption-key')}; live ones are refused`));
  }

  let temporal: TemporalCluster | undefined;
  let apps: AppGroup | undefined;
  let stopping = false;
  const start = async () => {
    temporal = await startTemporalCluster({
      binaries,
      dir: join(config.dataDir, 'cluster'),
      databaseUrl,
      temporalDatabase: config.cluster.temporalDatabase,
      namespace: config.temporal.namespace,
      frontendPort: config.temporal.port,
      uiPort: config.temporal.uiPort,
      logLevel: 'warn',
      log: say,
      onServerExit: (why) => say(`${why}. The workers and APIs wait for it; stop with Ctrl-C and start again.`),
    });
    if (stopping) return;
    apps = await startAppGroup({
      apiPorts,
      workers: config.cluster.workerProcesses,
      metricsBasePort: config.cluster.metricsPort,
      // Every API process builds checkout and callback URLs from one public address (the load balancer's).
      env: { ...env, TEMPORAL_ADDRESS: temporal.address, PUBLIC_BASE_URL: config.publicBaseUrl },
      onLine: printLine(),
      onExit: (name, code, signal) => {
        if (!stopping) say(`${name} exited (${signal ?? `code ${code}`}); the other processes keep running`);
      },
    });
  };
  const startup = start();

  const stopAll = async (why: string, exitCode: number) => {
    if (stopping) return;
    stopping = true;
    say(`${why}: stopping the APIs, the workers, the UI and Temporal…`);
    // Processes still starting run in their own process groups: let them come up, then stop them.
    await startup.catch(() => undefined);
    await apps?.stop();
    await temporal?.stop();
    say('stopped.');
    process.exit(exitCode);
  };
  let interrupts = 0;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (++interrupts === 1) return void stopAll(signal, 0);
      say('stopping at once (SIGKILL)');
      for (const p of [...(apps?.apis ?? []), ...(apps?.workers ?? [])]) p.child.kill('SIGKILL');
      if (temporal) process.kill(temporal.pid, 'SIGKILL');
      process.exit(130);
    });
  }
  let rolling = false;
  process.on('SIGUSR2', () => {
    if (!apps || rolling || stopping) return;
    rolling = true;
    say('SIGUSR2: replacing every worker and API process with the code on disk, one at a time…');
    apps.roll(say)
      .then(() => say('rolling restart done'))
      .catch((err: Error) => say(`rolling restart stopped: ${err.message}`))
      .finally(() => (rolling = false));
  });

  try {
    await startup;
  } catch (err) {
    console.error(`npm run start:cluster could not start: ${(err as Error).message}`);
    return stopAll('start failed', 1);
  }
  if (stopping) return;
  console.log([
    'Malipo is running as a cluster.',
    ...apps!.apis.map((a) => `  API ${a.name}:    ${a.url}  (pid ${a.pid})`),
    ...apps!.workers.map((w) => `  ${w.name}:     pid ${w.pid}${metricsOf(w)}`),
    `  Public URL:   ${config.publicBaseUrl}`,
    `  Temporal:     ${temporal!.address}  (databases ${temporal!.names.store}, ${temporal!.names.visibility}; log ${temporal!.logFile})`,
    `  Temporal UI:  ${temporal!.uiUrl}  (read-only)`,
    `  Database:     ${appDatabase}    Redis: ${config.redisUrl}`,
    'Create a store: DATABASE_URL=… npx malipo stores:create --name "My shop"',
    `Stop: Ctrl-C    Roll every process onto the code on disk: kill -USR2 ${process.pid}`,
  ].join('\n'));
}

async function refuseBadSetup(config: Config, apiPorts: number[]): Promise<void> {
  const problems: string[] = [];
  if (!config.databaseUrl) problems.push('DATABASE_URL: the PostgreSQL that holds Malipo\'s database and Temporal\'s two (e.g. postgres://127.0.0.1:5432/malipo)');
  if (!config.redisUrl) problems.push('REDIS_URL: the Redis the API processes share their rate limits through (e.g. redis://127.0.0.1:6379)');
  if (config.temporal.address) problems.push('TEMPORAL_ADDRESS: unset it; start:cluster runs its own Temporal server (TEMPORAL_PORT picks its port)');
  for (const port of apiPorts) {
    if (!(await isPortFree(port))) problems.push(`PORT: port ${port} for an API process is taken (the APIs use PORT … PORT+${apiPorts.length - 1})`);
  }
  if (problems.length) {
    console.error(`npm run start:cluster needs:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(2);
  }
}

/** Where a worker serves its metrics (CLUSTER_METRICS_PORT), for the start banner. */
function metricsOf(worker: AppProcess): string {
  const { own, temporal } = worker.metricsPorts;
  return own ? `  metrics :${own}/metrics, Temporal SDK :${temporal}/metrics` : '';
}

/** Prints each process's lines with its name in front, leaving out its own start banner. */
function printLine(): (name: string, line: string) => void {
  const colourOf = new Map<string, number>();
  const inBanner = new Set<string>();
  return (name, line) => {
    if (line === 'Malipo is running.') inBanner.add(name);
    if (inBanner.has(name)) {
      if (line.startsWith('Create a store:')) inBanner.delete(name);
      return;
    }
    if (!colourOf.has(name)) colourOf.set(name, colours[colourOf.size % colours.length]!);
    process.stdout.write(`\x1b[${colourOf.get(name)}m${name.padEnd(8)}|\x1b[0m ${line}\n`);
  };
}
