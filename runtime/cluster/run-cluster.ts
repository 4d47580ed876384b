import { join } from 'node:path';
import { keyringFor } from '../../activities/crypto/keyring.js';
import { migrate } from '../../db/migrate.js';
import type { Config } from '../config.js';
import { isPortFree } from './ports.js';
import { startAppGroup, type AppGroup } from './app-group.js';
import { ensureClusterBinaries } from './binaries.js';
import { databaseNameOf } from './postgres-target.js';
import { ensureDatabase } from './temporal-databases.js';
import { startTemporalCluster, type TemporalCluster } from './temporal-cluster.js';

const colours = [36, 33, 35, 32, 34, 31];

/**
 * `npm run start:cluster`: the production topology on one machine. Temporal's server on the
 * PostgreSQL of DATABASE_URL, its UI (read-only, loopback), and `CLUSTER_API_PROCESSES` API and
 * `CLUSTER_WORKER_PROCESSES` worker processes sharing REDIS_URL. APIs listen on PORT, PORT+1, ….
 * Ctrl-C stops the APIs, then the workers, then the UI and Temporal; the next start reuses the
 * databases, the chosen ports and the built binaries.
 */
export async function runCluster(config: Config, env: NodeJS.ProcessEnv): Promise<void> {
  const problems: string[] = [];
  if (!config.databaseUrl) problems.push('DATABASE_URL: the PostgreSQL that holds Malipo\'s database and Temporal\'s two (e.g. postgres://127.0.0.1:5432/malipo)');
  if (!config.redisUrl) problems.push('REDIS_URL: the Redis the API processes share their rate limits through (e.g. redis://127.0.0.1:6379)');
  if (config.temporal.address) problems.push('TEMPORAL_ADDRESS: unset it; start:cluster runs its own Temporal server (TEMPORAL_PORT picks its port)');
  if (problems.length) {
    console.error(`npm run start:cluster needs:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(2);
  }
  const databaseUrl = config.databaseUrl!;
  const say = (msg: string) => console.log(`\x1b[2mcluster |\x1b[0m ${msg}`);
  const apiPorts = Array.from({ length: config.cluster.apiProcesses }, (_, i) => config.port + i);
  for (const port of apiPorts) {
    if (!(await isPortFree(port))) {
      console.error(`port ${port} for an API process is taken; set PORT (the APIs use PORT … PORT+${apiPorts.length - 1})`);
      process.exit(2);
    }
  }

  const binaries = await ensureClusterBinaries({
    serverPath: config.cluster.serverPath, sqlToolPath: config.cluster.sqlToolPath, uiServerPath: config.cluster.uiServerPath, log: say,
  });
  const appDatabase = databaseNameOf(databaseUrl);
  if (await ensureDatabase(databaseUrl, appDatabase)) say(`created the database ${appDatabase}`);
  const applied = await migrate(databaseUrl);
  if (applied.length) say(`applied ${applied.length} migrations to ${appDatabase}`);
  // Without ENCRYPTION_KEY, make the development key once here, before processes race to it.
  if (!config.encryptionKeys) await keyringFor(config, 'test', () => say(`ENCRYPTION_KEY is not set: test-mode secrets use a development key in ${join(config.dataDir, 'encryption-key')}; live ones are refused`));

  let temporal: TemporalCluster | undefined;
  let apps: AppGroup | undefined;
  let stopping = false;
  const stopAll = async (why: string) => {
    if (stopping) return;
    stopping = true;
    say(`${why}: stopping the APIs, the workers, the UI and Temporal…`);
    await apps?.stop();
    await temporal?.stop();
    say('stopped.');
    process.exit(0);
  };
  let interrupts = 0;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (++interrupts > 1) {
        say('stopping at once (SIGKILL)');
        for (const p of [...(apps?.apis ?? []), ...(apps?.workers ?? [])]) p.child.kill('SIGKILL');
        process.exit(130);
      }
      void stopAll(signal);
    });
  }

  // `kill -USR2 <pid>`: the upgrade path (docs/production.md): every API and worker process is
  // replaced, one at a time, by one running the code now on disk.
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
  });
  if (stopping) return;
  // Every API process builds checkout and callback URLs from one public address (the load balancer's).
  const publicBaseUrl = config.publicBaseUrl;
  const colourOf = new Map<string, number>();
  const inBanner = new Set<string>();
  apps = await startAppGroup({
    apiPorts,
    workers: config.cluster.workerProcesses,
    env: { ...env, TEMPORAL_ADDRESS: temporal.address, PUBLIC_BASE_URL: publicBaseUrl },
    onLine: (name, line) => {
      // Each process's own start banner says what the summary below says for all of them.
      if (line === 'Malipo is running.') inBanner.add(name);
      if (inBanner.has(name)) {
        if (line.startsWith('Create a store:')) inBanner.delete(name);
        return;
      }
      if (!colourOf.has(name)) colourOf.set(name, colours[colourOf.size % colours.length]!);
      process.stdout.write(`\x1b[${colourOf.get(name)}m${name.padEnd(8)}|\x1b[0m ${line}\n`);
    },
    onExit: (name, code, signal) => {
      if (!stopping) say(`${name} exited (${signal ?? `code ${code}`}); the other processes keep running`);
    },
  });
  if (stopping) return;
  console.log([
    'Malipo is running as a cluster.',
    ...apps.apis.map((a) => `  API ${a.name}:    ${a.url}  (pid ${a.pid})`),
    ...apps.workers.map((w) => `  ${w.name}:     pid ${w.pid}`),
    `  Public URL:   ${publicBaseUrl}`,
    `  Temporal:     ${temporal.address}  (databases ${temporal.names.store}, ${temporal.names.visibility}; log ${temporal.logFile})`,
    `  Temporal UI:  ${temporal.uiUrl}  (read-only)`,
    `  Database:     ${appDatabase}    Redis: ${config.redisUrl}`,
    'Create a store: DATABASE_URL=… npx malipo stores:create --name "My shop"',
    `Stop: Ctrl-C    Roll every process onto the code on disk: kill -USR2 ${process.pid}`,
  ].join('\n'));
}
