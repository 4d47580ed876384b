import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { DatabasePool } from 'slonik';
import { buildApp } from '../../api/app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { openPool } from '../../db/pool.js';
import { createStore, type CreatedStore } from '../../db/store-repo.js';
import { randomToken } from '../../domain/ids.js';
import { loadConfig, type Config } from '../../runtime/config.js';
import { createWorkers, type WorkerSet } from '../../worker/worker.js';
import { createTestDatabase } from './database.js';

export interface Stack {
  app: FastifyInstance;
  pool: DatabasePool;
  temporal: Client;
  config: Config;
  workers: WorkerSet;
  createStore(name?: string): Promise<CreatedStore>;
  request(opts: InjectOptions & { key?: string }): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  stop(): Promise<void>;
}

/**
 * The real service for one test file: a fresh PostgreSQL database, the shared Temporal dev
 * server, real workers on a private task-queue prefix and the Fastify app (driven by inject).
 */
let runtimeInstalled = false;

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const address = process.env.MALIPO_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('the jest global setup did not start Temporal');
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: address,
    TASK_QUEUE_PREFIX: `t${randomToken(8)}-`,
    PUBLIC_BASE_URL: 'http://malipo.test',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const pool = await openPool(db.url, 5);
  const nativeConnection = await NativeConnection.connect({ address });
  const workers = await createWorkers({ connection: nativeConnection, namespace: config.temporal.namespace, deps: { pool, config } });
  const running = workers.run();
  const connection = await Connection.connect({ address });
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const app = await buildApp({ config, pool, temporal, rateLimitStore: memoryRateLimitStore() });
  return {
    app,
    pool,
    temporal,
    config,
    workers,
    createStore: (name = 'Test store') => createStore(pool, name, config.keyPrefix),
    async request({ key, headers, ...opts }) {
      const res = await app.inject({ ...opts, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
      let body: unknown;
      try {
        body = res.json();
      } catch {
        body = res.body;
      }
      return { status: res.statusCode, body, headers: res.headers };
    },
    async stop() {
      await app.close();
      await workers.shutdown();
      await running;
      await nativeConnection.close();
      await connection.close();
      await pool.end();
      await db.drop();
    },
  };
}
