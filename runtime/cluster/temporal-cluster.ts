import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterBinaries } from './binaries.js';
import { freeLowPort, freePort, isPortFree } from './ports.js';
import { postgresTargetOf } from './postgres-target.js';
import { temporalDatabaseNames } from './settings.js';
import { setupTemporalDatabases } from './temporal-databases.js';
import { ensureNamespace, internalPortNames, startTemporalServer, type ServerPorts } from './temporal-server.js';
import { startTemporalUi } from './temporal-ui.js';

export interface TemporalClusterOptions {
  binaries: ClusterBinaries;
  /** Where configs, logs and the chosen internal ports are kept (reused by the next start). */
  dir: string;
  /** Any database URL on the PostgreSQL server that holds Temporal's databases. */
  databaseUrl: string;
  /** Base name: `<name>` and `<name>_visibility`. */
  temporalDatabase: string;
  namespace: string;
  frontendPort: number;
  /** The UI's port; unset runs no UI. */
  uiPort?: number;
  logLevel?: string;
  log?: (msg: string) => void;
  /** Called if the server process ends by itself (not through `stop()`). */
  onServerExit?: (why: string) => void;
}

export interface TemporalCluster {
  address: string;
  /** The server process (all four services). */
  pid: number;
  uiUrl?: string;
  names: { store: string; visibility: string };
  ports: ServerPorts;
  logFile: string;
  /** Stops the UI, then the server (it finishes its in-flight persistence writes first). */
  stop(): Promise<void>;
}

/**
 * Temporal as production runs it, on this machine: the schema tool migrates both databases, the
 * server runs all four services on PostgreSQL, the namespace and search attributes are ensured,
 * and the UI server runs read-only beside it. The frontend and UI ports are the caller's; the
 * internal ones are free ports, kept in `dir` and reused while they stay free.
 */
export async function startTemporalCluster(opts: TemporalClusterOptions): Promise<TemporalCluster> {
  const log = opts.log ?? (() => undefined);
  await mkdir(join(opts.dir, 'logs'), { recursive: true });
  for (const [what, port] of [['Temporal frontend', opts.frontendPort], ['Temporal UI', opts.uiPort]] as const) {
    if (port !== undefined && !(await isPortFree(port))) {
      throw new Error(`port ${port} for the ${what} is taken (is \`npm start\` or another cluster running?); set ${what === 'Temporal UI' ? 'TEMPORAL_UI_PORT' : 'TEMPORAL_PORT'} to another port`);
    }
  }
  const target = postgresTargetOf(opts.databaseUrl);
  const names = temporalDatabaseNames(opts.temporalDatabase);
  await setupTemporalDatabases({ sqlTool: opts.binaries.sqlTool, target, names, log });
  const ports = await internalPorts(opts.dir, opts.frontendPort);
  const logFile = join(opts.dir, 'logs', 'temporal-server.log');
  let stopping = false;
  const server = await startTemporalServer({
    binary: opts.binaries.server, dir: join(opts.dir, 'temporal'), logFile, target, names, ports, logLevel: opts.logLevel,
    onExit: (code, signal) => {
      if (!stopping) opts.onServerExit?.(`the Temporal server exited (${signal ?? `code ${code}`}); its log: ${logFile}`);
    },
  });
  try {
    log(`Temporal server ${server.address} is up (log: ${logFile})`);
    await ensureNamespace(server.address, opts.namespace, log);
    let ui: Awaited<ReturnType<typeof startTemporalUi>> | undefined;
    if (opts.uiPort !== undefined) {
      ui = await startTemporalUi({
        binary: opts.binaries.uiServer, dir: join(opts.dir, 'ui'), logFile: join(opts.dir, 'logs', 'temporal-ui.log'),
        temporalAddress: server.address, port: opts.uiPort,
      });
    }
    return {
      address: server.address,
      pid: server.child.pid!,
      uiUrl: ui?.url,
      names,
      ports,
      logFile,
      async stop() {
        stopping = true;
        await ui?.stop();
        await server.stop();
      },
    };
  } catch (err) {
    stopping = true;
    await server.stop();
    throw err;
  }
}

async function internalPorts(dir: string, frontend: number): Promise<ServerPorts> {
  const file = join(dir, 'ports.json');
  let saved: Partial<Record<string, number>> = {};
  try {
    saved = JSON.parse(await readFile(file, 'utf8')) as Partial<Record<string, number>>;
  } catch {
    // First start: every internal port is picked fresh.
  }
  const ports: Partial<ServerPorts> = { frontend };
  const taken = new Set<number>([frontend]);
  for (const name of internalPortNames) {
    const old = saved[name];
    const fresh = async () => (name.endsWith('Membership') ? freeLowPort(taken) : freePort());
    let port = old && !taken.has(old) && (await isPortFree(old)) ? old : await fresh();
    while (taken.has(port)) port = await fresh();
    taken.add(port);
    ports[name] = port;
  }
  await writeFile(file, `${JSON.stringify(ports, null, 2)}\n`);
  return ports as ServerPorts;
}
