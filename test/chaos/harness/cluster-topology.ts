import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { migrate } from '../../../db/migrate.js';
import { formatKeyEntry, generateKey } from '../../../domain/crypto/credentials.js';
import { randomToken } from '../../../domain/ids.js';
import { startAppGroup, type AppGroup } from '../../../runtime/cluster/app-group.js';
import type { AppProcess } from '../../../runtime/cluster/app-processes.js';
import { ensureClusterBinaries } from '../../../runtime/cluster/binaries.js';
import { freeLowPort, freePorts } from '../../../runtime/cluster/ports.js';
import { postgresTargetOf } from '../../../runtime/cluster/postgres-target.js';
import { temporalDatabaseNames } from '../../../runtime/cluster/settings.js';
import { setupTemporalDatabases } from '../../../runtime/cluster/temporal-databases.js';
import { ensureNamespace, startTemporalServer, type RunningTemporalServer, type ServerPorts } from '../../../runtime/cluster/temporal-server.js';
import { startPostgresInstance, type PostgresInstance } from './postgres-instance.js';
import { sleep } from './outages.js';

/**
 * The production topology of docs/production.md on this machine, built so that each piece can be
 * killed with SIGKILL and started again: a PostgreSQL of its own (Malipo's database and Temporal's
 * two), the pinned Temporal server on it, N `malipo api` and N `malipo worker` processes.
 * Anything that exits without being killed here is restarted as a supervisor (compose's
 * `restart: always`, systemd) would, and noted in `unplannedExits`.
 */
export interface ClusterTopology {
  pg: PostgresInstance;
  appDbUrl: string;
  temporalDbNames: { store: string; visibility: string };
  temporalAddress: string;
  temporal: Client;
  group: AppGroup;
  /** The API base URLs (fixed ports: a restarted API comes back on the same one). */
  apiUrls: string[];
  env: Record<string, string | undefined>;
  /** Every output line by process name (api-1, worker-2, …; restarts get new names). */
  output: Map<string, string[]>;
  temporalLogFile: string;
  unplannedExits: string[];
  killApi(index: number): Promise<{ api: string; downAt: number }>;
  restartApi(api: string): Promise<void>;
  killWorker(index: number): Promise<void>;
  restartWorker(): Promise<void>;
  killTemporal(): Promise<void>;
  restartTemporal(): Promise<void>;
  stop(): Promise<void>;
}

export async function startClusterTopology(opts: { apis: number; workers: number; env: Record<string, string> }): Promise<ClusterTopology> {
  const output = new Map<string, string[]>();
  const pgi = await startPostgresInstance();
  const root = await mkdtemp(join(tmpdir(), 'malipo-chaos-cluster-'));
  const unplannedExits: string[] = [];
  let stopping = false;

  const appDbUrl = pgi.urlOf('malipo');
  const admin = new pg.Client({ connectionString: pgi.url });
  await admin.connect();
  await admin.query('CREATE DATABASE malipo');
  await admin.end();
  await migrate(appDbUrl);

  // Temporal: the pinned server on this PostgreSQL, its databases migrated by its own sql tool.
  const binaries = await ensureClusterBinaries({ log: console.log });
  const target = postgresTargetOf(pgi.url);
  const temporalDbNames = temporalDatabaseNames('temporal');
  await setupTemporalDatabases({ sqlTool: binaries.sqlTool, target, names: temporalDbNames });
  const ports = await serverPorts();
  const temporalLogFile = join(root, 'temporal-server.log');
  const killedPids = new Set<number>();
  let server: RunningTemporalServer | undefined;

  const startServer = async (): Promise<void> => {
    server = await startTemporalServer({
      binary: binaries.server, dir: join(root, 'temporal'), logFile: temporalLogFile, target, names: temporalDbNames, ports, logLevel: 'warn',
      // The server that exits is the current one: a new one starts only after it (or after a failed start).
      onExit: (code, signal) => onTemporalExit(server?.child, code, signal),
    });
  };
  const onTemporalExit = (child: ChildProcess | undefined, code: number | null, signal: NodeJS.Signals | null) => {
    if (stopping || !child || killedPids.has(child.pid!)) return;
    killedPids.add(child.pid!); // handled once: a failed restart attempt's exit must not start a second loop
    unplannedExits.push(`temporal-server exited on its own (${signal ?? `code ${code}`}) at ${new Date().toISOString()}`);
    void keepTrying('restart the Temporal server', startServer);
  };
  await startServer();
  await ensureNamespace(server!.address, 'default');
  const temporalAddress = server!.address;
  const connection = await Connection.connect({ address: temporalAddress });
  const temporal = new Client({ connection, namespace: 'default' });

  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_OPTIONS: '', // not jest's --experimental-vm-modules
    DATABASE_URL: appDbUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    TASK_QUEUE_PREFIX: `chaos${randomToken(6)}-`,
    PUBLIC_BASE_URL: 'http://malipo.test',
    ENCRYPTION_KEY: formatKeyEntry(generateKey()),
    DATA_DIR: root,
    LOG_LEVEL: 'info',
    ...opts.env,
  };
  const apiPorts = await freePorts(opts.apis);
  const apiUrls = apiPorts.map((p) => `http://127.0.0.1:${p}`);
  const onExit = (name: string, code: number | null, signal: NodeJS.Signals | null) => {
    const p = [...group.apis, ...group.workers].find((x) => x.name === name);
    if (stopping || !p || killedPids.has(p.pid)) return;
    unplannedExits.push(`${name} exited on its own (${signal ?? `code ${code}`}) at ${new Date().toISOString()}`);
    void keepTrying(`restart ${name}`, () => replace(p));
  };
  const group: AppGroup = await startAppGroup({
    apiPorts, workers: opts.workers, env,
    onLine: (name, line) => {
      const lines = output.get(name) ?? [];
      lines.push(line);
      output.set(name, lines);
    },
    onExit,
  });

  /** Takes a dead process out of the group and starts its successor (an API on the same port). */
  const replace = async (p: AppProcess): Promise<AppProcess> => {
    const list = p.kind === 'api' ? group.apis : group.workers;
    if (list.includes(p)) list.splice(list.indexOf(p), 1);
    return p.kind === 'api' ? group.addApi(Number(new URL(p.url!).port)) : group.addWorker();
  };
  const kill = async (p: AppProcess) => {
    killedPids.add(p.pid);
    p.child.kill('SIGKILL');
    await p.exited;
  };
  const deadApis = new Map<string, AppProcess>();
  const deadWorkers: AppProcess[] = [];

  return {
    pg: pgi, appDbUrl, temporalDbNames, temporalAddress, temporal, group, apiUrls, env, output, temporalLogFile, unplannedExits,
    async killApi(index) {
      const p = group.apis[index % group.apis.length]!;
      await kill(p);
      deadApis.set(p.url!, p);
      return { api: p.url!, downAt: Date.now() };
    },
    async restartApi(api) {
      const p = deadApis.get(api)!;
      deadApis.delete(api);
      await keepTrying(`restart ${p.name}`, () => replace(p));
    },
    async killWorker(index) {
      const p = group.workers[index % group.workers.length]!;
      await kill(p);
      deadWorkers.push(p);
    },
    async restartWorker() {
      const p = deadWorkers.shift()!;
      await keepTrying(`restart ${p.name}`, () => replace(p));
    },
    async killTemporal() {
      const child = server!.child;
      killedPids.add(child.pid!);
      const gone = new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
      child.kill('SIGKILL');
      await gone;
    },
    restartTemporal: () => keepTrying('restart the Temporal server', startServer),
    async stop() {
      stopping = true;
      await group.stop().catch(() => undefined);
      await connection.close().catch(() => undefined);
      await server?.stop().catch(() => undefined);
      await pgi.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** The server's ports: membership ports below 32768 (Temporal keeps them in a smallint column). */
async function serverPorts(): Promise<ServerPorts> {
  const [frontend, frontendHttp, history, matching, worker] = await freePorts(5);
  const taken = new Set<number>([frontend!, frontendHttp!, history!, matching!, worker!]);
  const low = async () => {
    const p = await freeLowPort(taken);
    taken.add(p);
    return p;
  };
  return {
    frontend: frontend!, frontendHttp: frontendHttp!, history: history!, matching: matching!, worker: worker!,
    frontendMembership: await low(), historyMembership: await low(), matchingMembership: await low(), workerMembership: await low(),
  };
}

/** Retries a start that may fail while a dependency is still down (a supervisor's restart loop), for up to 3 minutes. */
async function keepTrying<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`could not ${what} within 3 minutes: ${(err as Error).message}`);
      await sleep(1_000);
    }
  }
}
