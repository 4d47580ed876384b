import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { allSearchAttributeKeys } from '../../domain/search-attributes.js';
import { stopChild, waitForPort } from '../embedded-temporal.js';
import type { PostgresTarget } from './postgres-target.js';
import { clusterSettings, dynamicConfigPath, retentionSeconds } from './settings.js';

/** The ports of the four Temporal services (gRPC and ringpop membership) and the frontend's HTTP API. */
export interface ServerPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
}

export const internalPortNames = ['frontendHttp', 'frontendMembership', 'history', 'historyMembership', 'matching', 'matchingMembership', 'worker', 'workerMembership'] as const;

function sqlStore(target: PostgresTarget, database: string, maxConns: number, maxIdleConns: number) {
  const tls = target.sslmode && !['disable', 'prefer', 'allow'].includes(target.sslmode)
    ? { tls: { enabled: true, enableHostVerification: target.sslmode === 'verify-full' } }
    : {};
  return {
    sql: {
      pluginName: clusterSettings.sqlPlugin,
      databaseName: database,
      connectAddr: `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`,
      connectProtocol: 'tcp',
      user: target.user,
      password: target.password,
      maxConns,
      maxIdleConns,
      maxConnLifetime: clusterSettings.sqlMaxConnLifetime,
      ...tls,
    },
  };
}

/**
 * The server's static config: what Temporal's auto-setup image renders from its template for
 * docker-compose.yml, with the values of `clusterSettings`, every service on 127.0.0.1.
 * Written as JSON, which the server's YAML loader reads as it is.
 */
export function serverConfig(opts: { target: PostgresTarget; names: { store: string; visibility: string }; ports: ServerPorts; logLevel: string }) {
  const { ports } = opts;
  const service = (grpcPort: number, membershipPort: number, httpPort?: number) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...(httpPort ? { httpPort } : {}) },
  });
  return {
    log: { stdout: true, level: opts.logLevel },
    persistence: {
      numHistoryShards: clusterSettings.numHistoryShards,
      defaultStore: 'default',
      visibilityStore: 'visibility',
      datastores: {
        default: sqlStore(opts.target, opts.names.store, clusterSettings.sqlMaxConns, clusterSettings.sqlMaxIdleConns),
        visibility: sqlStore(opts.target, opts.names.visibility, clusterSettings.sqlVisibilityMaxConns, clusterSettings.sqlVisibilityMaxIdleConns),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      pprof: { port: 0 },
    },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, ports.frontendHttp),
      matching: service(ports.matching, ports.matchingMembership),
      history: service(ports.history, ports.historyMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
          httpAddress: `127.0.0.1:${ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    publicClient: { hostPort: `127.0.0.1:${ports.frontend}` },
    dynamicConfigClient: { filepath: dynamicConfigPath, pollInterval: '60s' },
  };
}

export interface RunningTemporalServer {
  address: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Runs `server start` (frontend, history, matching and worker in one process) with the config
 * written under `dir`, its log appended to `logFile`; resolves once the frontend answers.
 */
export async function startTemporalServer(opts: {
  binary: string;
  dir: string;
  logFile: string;
  target: PostgresTarget;
  names: { store: string; visibility: string };
  ports: ServerPorts;
  logLevel?: string;
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
}): Promise<RunningTemporalServer> {
  const configDir = join(opts.dir, 'config');
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  const config = serverConfig({ target: opts.target, names: opts.names, ports: opts.ports, logLevel: opts.logLevel ?? 'warn' });
  // The config holds the database password, as the auto-setup image's rendered file does.
  await writeFile(join(configDir, 'malipo.yaml'), `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  const log = await open(opts.logFile, 'a');
  const child = spawn(opts.binary, ['--root', opts.dir, '--config', 'config', '--env', 'malipo', '--allow-no-auth', 'start'], {
    stdio: ['ignore', log.fd, log.fd],
    detached: true, // its own process group: Ctrl-C reaches the runner, which stops things in order
  });
  await log.close();
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `the Temporal server exited (${signal ?? `code ${code}`}); its log: ${opts.logFile}`;
    opts.onExit?.(code, signal);
  });
  const address = `127.0.0.1:${opts.ports.frontend}`;
  try {
    await waitForPort(opts.ports.frontend, 120_000, () => exited);
    await waitForFrontend(address, 120_000, () => exited);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  return { address, child, stop: () => stopChild(child, 20_000) };
}

async function waitForFrontend(address: string, timeoutMs: number, failed: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const why = failed();
    if (why) throw new Error(why);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`the Temporal frontend at ${address} did not answer within ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `temporal.api.enums.v1.IndexedValueType`: INDEXED_VALUE_TYPE_KEYWORD, INDEXED_VALUE_TYPE_DATETIME. */
const indexedValueTypes = { KEYWORD: 2, DATETIME: 6 } as const;
/** A value each attribute's type parses, for the probe query. */
const probeValues = { KEYWORD: '"probe"', DATETIME: '"2000-01-01T00:00:00Z"' } as const;
type AttributeType = keyof typeof indexedValueTypes;
type Long = NonNullable<NonNullable<Parameters<Connection['workflowService']['registerNamespace']>[0]['workflowExecutionRetentionPeriod']>['seconds']>;
const grpcNotFound = 5;

/**
 * What `temporal operator namespace create` and `temporal operator search-attribute create` do
 * (and docker-compose's temporal-setup service): the namespace with the retention of
 * `clusterSettings`, and Malipo's five Keyword search attributes. Existing ones are kept. Then
 * waits until the frontend accepts queries on them, so the first link can be started at once.
 */
export async function ensureNamespace(address: string, namespace: string, log?: (msg: string) => void): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch (err) {
      if ((err as { code?: number }).code !== grpcNotFound) throw err;
      await connection.workflowService.registerNamespace({
        namespace,
        // protobufjs takes a plain number for an int64; the generated type only names Long.
        workflowExecutionRetentionPeriod: { seconds: retentionSeconds() as unknown as Long },
      });
      log?.(`registered the Temporal namespace ${namespace} (retention ${clusterSettings.namespaceRetention})`);
    }
    const existing = await retry(() => connection.operatorService.listSearchAttributes({ namespace }), 60_000);
    const missing = allSearchAttributeKeys.filter((k) => !(k.name in (existing.customAttributes ?? {})));
    if (missing.length) {
      await retry(() => connection.operatorService.addSearchAttributes({
        namespace,
        searchAttributes: Object.fromEntries(missing.map((k) => [k.name, indexedValueTypes[k.type as AttributeType]])),
      }), 60_000);
      log?.(`registered the search attributes ${missing.map((k) => k.name).join(', ')}`);
    }
    // The frontend caches namespaces and their search attributes (refreshed every few seconds).
    const query = allSearchAttributeKeys.map((k) => `${k.name} = ${probeValues[k.type as AttributeType]}`).join(' AND ');
    await retry(() => connection.workflowService.countWorkflowExecutions({ namespace, query }), 90_000);
  } finally {
    await connection.close();
  }
}

async function retry<T>(fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
