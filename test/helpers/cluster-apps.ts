import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { openPool, type DatabasePool } from '../../db/pool.js';
import { createStore, type CreatedStore } from '../../db/store-repo.js';
import { formatKeyEntry, generateKey } from '../../domain/crypto/credentials.js';
import { randomToken } from '../../domain/ids.js';
import { startAppGroup, type AppGroup } from '../../runtime/cluster/app-group.js';
import { freePorts } from '../../runtime/cluster/ports.js';
import { createTestDatabase } from './database.js';
import { httpCall, type HttpRequest, type HttpResponse } from './http.js';

export interface ClusterApps {
  group: AppGroup;
  pool: DatabasePool;
  temporal: Client;
  namespace: string;
  databaseName: string;
  taskQueuePrefix: string;
  /** Every line the processes printed, by process name (for a failing test's message). */
  output: Map<string, string[]>;
  createStore(name?: string): Promise<CreatedStore>;
  /** An HTTP request to API process `api` (0-based); `key` goes in x-api-key. */
  request(api: number, opts: HttpRequest & { key?: string }): Promise<HttpResponse>;
  stop(): Promise<void>;
}

/**
 * The api and worker services as separate processes (`malipo api`, `malipo worker`), exactly as
 * `npm run start:cluster` runs them: a fresh PostgreSQL database, the run's Temporal, the real
 * Redis, one ENCRYPTION_KEY, their own task-queue prefix, APIs on free ports.
 */
export async function startClusterApps(opts: { apis: number; workers: number; env?: Record<string, string> }): Promise<ClusterApps> {
  const temporalAddress = process.env.MALIPO_TEST_TEMPORAL_ADDRESS;
  if (!temporalAddress) throw new Error('the jest global setup did not start Temporal');
  const db = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'malipo-apps-'));
  const output = new Map<string, string[]>();
  const taskQueuePrefix = `c${randomToken(8)}-`;
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_OPTIONS: '', // not jest's --experimental-vm-modules
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    TASK_QUEUE_PREFIX: taskQueuePrefix,
    PUBLIC_BASE_URL: 'http://malipo.test',
    ENCRYPTION_KEY: formatKeyEntry(generateKey()),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    CHAIN_WATCHERS: 'off',
    ...opts.env,
  };
  const group = await startAppGroup({
    apiPorts: await freePorts(opts.apis),
    workers: opts.workers,
    env,
    onLine: (name, line) => {
      const lines = output.get(name) ?? [];
      lines.push(line);
      output.set(name, lines.slice(-200));
    },
  });
  const pool = await openPool(db.url, 3);
  const connection = await Connection.connect({ address: temporalAddress });
  const temporal = new Client({ connection, namespace: 'default' });
  return {
    group,
    pool,
    temporal,
    namespace: 'default',
    databaseName: new URL(db.url).pathname.slice(1),
    taskQueuePrefix,
    output,
    createStore: (name = 'Cluster store') => createStore(pool, name, 'sk'),
    request(api, { key, headers, ...req }) {
      const target = group.apis[api];
      if (!target?.url) throw new Error(`no API process ${api}`);
      return httpCall(target.url, { ...req, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
    },
    async stop() {
      await group.stop();
      await connection.close();
      await pool.end();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
