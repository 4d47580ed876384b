import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { buildApp } from '../../runtime/http-app.js';
import type { MetricsRegistry } from '../../runtime/metrics.js';
import type { Tracing } from '../../runtime/tracing.js';
import { clientInterceptors } from '../../temporal-client/correlation.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { openPool } from '../../db/pool.js';
import { rateServiceFor } from '../../services/rates/rate-service.js';
import { createStore, type CreatedStore } from '../../db/store-repo.js';
import { railFacts, usdtRails } from '../../rails/registry.js';
import { randomToken } from '../../domain/ids.js';
import { loadConfig, type Config } from '../../config/config.js';
import { createWorkers, type WorkerSet } from '../../worker/worker.js';
import { anvilChainId } from './anvil.js';
import { createTestDatabase } from './database.js';
import { sharedWorkflowBundle } from './workflow-bundle.js';
import { httpCall, type HttpRequest, type HttpResponse } from './http.js';
import { eventually } from './wait.js';

export interface Stack {
  app: FastifyInstance;
  pool: DatabasePool;
  temporal: Client;
  config: Config;
  workers: WorkerSet;
  /** With OTEL_EXPORTER_OTLP_ENDPOINT in the env: the tracing the API, the client and the workers share. */
  tracing: Tracing | undefined;
  /** Stops every worker (as a crash or deploy would), runs `whileDown`, then starts fresh ones. */
  restartWorkers(whileDown?: () => Promise<void>): Promise<void>;
  createStore(name?: string): Promise<CreatedStore>;
  baseUrl: string;
  /** An HTTP request to the listening app; `key` goes in x-api-key. */
  request(opts: HttpRequest & { key?: string }): Promise<HttpResponse>;
  /**
   * Resolves once the workflow of link or invoice `id` runs: creation answers before it starts
   * (services/payment-links/start-handoff.ts), so a test that speaks to the workflow directly waits.
   */
  workflowStarted(id: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A test that points an EVM rail's RPC somewhere points it at anvil (or a proxy in front of it),
 * on chain 31337: the rail's chain id says so (CHAIN_ID_<RAIL>_<ENV>), as an operator's would,
 * unless the test names one itself. Otherwise the checkout would name the public testnet's chain
 * and the start-up check (rails/evm/chain-id-check.ts) would refuse the node.
 */
function withAnvilChainIds(env: Record<string, string>): Record<string, string> {
  const evmSettings = usdtRails.filter((rail) => railFacts[rail].family === 'evm').flatMap((rail) => [`${rail}_TEST`, `${rail}_LIVE`]);
  const chainIds = evmSettings.filter((s) => env[`RPC_URL_${s}`] !== undefined && env[`CHAIN_ID_${s}`] === undefined).map((s) => [`CHAIN_ID_${s}`, String(anvilChainId)]);
  return { ...Object.fromEntries(chainIds), ...env };
}

/**
 * The real service for one test file: a fresh PostgreSQL database, the shared Temporal dev
 * server, real workers on a private task-queue prefix and the Fastify app (driven by inject).
 */
let runtimeInstalled = false;

export async function startStack(env: Record<string, string> = {}, opts: { logger?: Logger; temporalAddress?: string; metrics?: MetricsRegistry } = {}): Promise<Stack> {
  // `temporalAddress`: reach the run's Temporal another way (through a TcpSwitch, to cut it off).
  const temporalAddress = opts.temporalAddress ?? process.env.MALIPO_TEST_TEMPORAL_ADDRESS;
  if (!temporalAddress) throw new Error('the jest global setup did not start Temporal');
  if (!runtimeInstalled) {
    runtimeInstalled = true;
    try {
      Runtime.install({ logger: new DefaultLogger('WARN') });
    } catch {
      // Already made by this process (a bench that started Temporal itself): keep that one.
    }
  }
  const db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: temporalAddress,
    TASK_QUEUE_PREFIX: `t${randomToken(8)}-`,
    PUBLIC_BASE_URL: 'http://malipo.test',
    LOG_LEVEL: 'silent',
    CHAIN_WATCHERS: 'off',
    ...withAnvilChainIds(env),
  });
  // As the service opens it (services.ts): named statements unless DATABASE_PREPARED_STATEMENTS=false.
  const pool = await openPool(db.url, 5, { preparedStatements: config.databasePreparedStatements });
  // As the service connects (services.ts): one native connection for the client and the workers.
  const nativeConnection = await NativeConnection.connect({ address: temporalAddress });
  // As the service traces (services.ts): only with OTEL_EXPORTER_OTLP_ENDPOINT set, and then with the traced workflow bundle.
  const tracing = config.tracing && (await import('../../runtime/tracing.js')).startTracing(config.tracing, 'malipo');
  const temporal = new Client({ connection: nativeConnection, namespace: config.temporal.namespace, interceptors: clientInterceptors(tracing?.clientInterceptors) });
  const rates = rateServiceFor(config, pool);
  const newWorkers = () => createWorkers({
    connection: nativeConnection,
    namespace: config.temporal.namespace,
    deps: { pool, config, temporal, rates, metrics: opts.metrics?.metrics, tracer: tracing?.tracer },
    workflowBundle: tracing ? undefined : sharedWorkflowBundle(),
    tracing: tracing?.worker,
  });
  let workers = await newWorkers();
  let running = workers.run();
  // `metrics`: count as the service does (runtime/services.ts), into one registry for the API and the workers.
  const app = await buildApp({ config, pool, temporal, rateLimitStore: memoryRateLimitStore(), rates, logger: opts.logger, metrics: opts.metrics?.metrics, metricsText: opts.metrics?.render, tracer: tracing?.tracer });
  // With PORT set (browser tests: PUBLIC_BASE_URL must point at the real server) listen there.
  await app.listen({ host: '127.0.0.1', port: env.PORT ? config.port : 0 });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    baseUrl,
    app,
    pool,
    temporal,
    config,
    tracing,
    get workers() {
      return workers;
    },
    async restartWorkers(whileDown?: () => Promise<void>) {
      await workers.shutdown();
      await running;
      await whileDown?.();
      workers = await newWorkers();
      running = workers.run();
    },
    createStore: (name = 'Test store') => createStore(pool, name, config.keyPrefix),
    async workflowStarted(id) {
      await eventually(async () => (await pool.maybeOneFirst(sql.type(z.object({ s: z.boolean() }))`
        SELECT workflow_started AS s FROM payment_links WHERE id = ${id}`)) || undefined, `the workflow of ${id} to start`);
    },
    request({ key, headers, ...req }) {
      return httpCall(baseUrl, { ...req, headers: { ...(key ? { 'x-api-key': key } : {}), ...headers } });
    },
    async stop() {
      await app.close();
      await workers.shutdown();
      await running;
      await nativeConnection.close();
      await tracing?.shutdown();
      await pool.end();
      await db.drop();
    },
  };
}
