import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import { connectTemporal } from './temporal-connect.js';
import pino, { type Logger } from 'pino';
import type { FastifyInstance } from 'fastify';
import type { DatabasePool } from 'slonik';
import { buildApp } from './http-app.js';
import { loggerOptions } from '../api/plugins/log-redaction.js';
import { memoryRateLimitStore, redisRateLimitStore, type RateLimitStore } from '../api/plugins/rate-limit.js';
import { migrate } from '../db/migrate.js';
import { rateServiceFor } from '../services/rates/rate-service.js';
import { openPool } from '../db/pool.js';
import { createWorkers, type WorkerSet } from '../worker/worker.js';
import { ensureWatchersForOpenWork } from '../services/chains/watchers.js';
import { checkChainIds } from '../rails/evm/chain-id-check.js';
import { backfillLegacyDerivedAddresses, fillIncompleteGaps } from '../services/wallets/derived-addresses.js';
import { ensureWebhookSweeper } from '../services/webhooks/endpoints.js';
import { ensureMpesaPull, ensureReconciler } from '../services/reconciliation/scheduler.js';
import type { Config } from '../config/config.js';
import { clientInterceptors } from '../temporal-client/correlation.js';
import { countUndispatchedEvents, countUnstartedLinks, createMetricsRegistry, serveMetrics } from './metrics.js';
import { undispatchedBacklog } from '../db/event-repo.js';
import { unstartedBacklog } from '../db/payment-link-repo.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.js';
import { startEmbeddedTemporal, type EmbeddedTemporal } from './embedded-temporal.js';
import { ensureTemporalCli } from './temporal-cli.js';

export function createLogger(config: Config): Logger {
  return pino(loggerOptions(config.logLevel));
}

/**
 * Routes the Temporal SDK's own logs (worker state, activity failures) into our pino logger, and
 * with TEMPORAL_METRICS_PORT has its core serve its worker and client metrics to Prometheus.
 */
function installTemporalRuntime(logger: Logger, config: Config): void {
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace', DEBUG: 'debug', INFO: 'debug', WARN: 'warn', ERROR: 'error',
  };
  const sdkLogger = new DefaultLogger('INFO', (entry) => logger[levels[entry.level]]({ ...entry.meta, sdk: 'temporal' }, entry.message));
  if (!config.temporalMetricsPort) return void Runtime.install({ logger: sdkLogger });
  const bindAddress = `${bindHost(config.host)}:${config.temporalMetricsPort}`;
  try {
    Runtime.install({ logger: sdkLogger, telemetryOptions: { metrics: { prometheus: { bindAddress, countersTotalSuffix: true, useSecondsForDurations: true } } } });
  } catch (err) {
    // A taken port (a second worker on one machine) costs the SDK's metrics, never the worker.
    logger.warn({ err, bindAddress }, 'the Temporal SDK could not serve its metrics (TEMPORAL_METRICS_PORT); running without them');
    Runtime.install({ logger: sdkLogger });
  }
}

/** An IPv6 host in brackets, as a socket address wants it. */
function bindHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export interface Running {
  apiUrl?: string;
  temporalUiUrl?: string;
  databaseUrl: string;
  temporalAddress: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  api: boolean;
  worker: boolean;
}

/**
 * Starts what this process should run. With `DATABASE_URL` / `TEMPORAL_ADDRESS` unset it first
 * starts the embedded PGlite and Temporal dev server; with them set it starts nothing embedded.
 * `stop()` shuts everything down in reverse order.
 */
export async function startServices(config: Config, logger: Logger, opts: StartOptions): Promise<Running> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) {
      try {
        await s();
      } catch (err) {
        logger.warn({ err }, 'error during shutdown');
      }
    }
  };
  try {
    // Both kinds of process read EVM chains (workers watch them, the API reads balances): each asks
    // its RPCs which chain they are on, in the background, and uses none found on another chain.
    // GET /ready says what was found.
    const chainIds = checkChainIds(config.rails, logger);
    stops.push(async () => chainIds.stop());
    // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; stopped last, so the spans of the shutdown are sent too.
    const tracing = config.tracing && (await import('./tracing.js')).startTracing(config.tracing, opts.api && opts.worker ? 'malipo' : opts.api ? 'malipo-api' : 'malipo-worker');
    if (tracing) {
      stops.push(() => tracing.shutdown());
      logger.info({ tracesUrl: redactedUrl(config.tracing!.tracesUrl), sampler: config.tracing!.sampler }, 'tracing on: spans go over OTLP/HTTP');
    }
    let databaseUrl = config.databaseUrl;
    let embeddedPg: EmbeddedPostgres | undefined;
    if (!databaseUrl) {
      embeddedPg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.pglitePort });
      stops.push(() => embeddedPg!.stop());
      databaseUrl = embeddedPg.url;
    }
    await migrate(databaseUrl);
    const pool = await openPool(databaseUrl, embeddedPg ? 4 : 10, { preparedStatements: config.databasePreparedStatements && !embeddedPg });
    stops.push(() => pool.end());

    let temporalAddress = config.temporal.address;
    let temporalUiUrl: string | undefined;
    if (!temporalAddress) {
      const cliPath = await ensureTemporalCli({ explicitPath: config.temporal.cliPath, downloadBase: config.temporal.cliDownloadBase, log: (m) => logger.info(m) });
      const embedded: EmbeddedTemporal = await startEmbeddedTemporal({
        cliPath,
        dataDir: config.dataDir,
        port: config.temporal.port,
        uiPort: config.temporal.uiPort,
        namespace: config.temporal.namespace,
        log: (level, message) => logger[level](message),
      });
      stops.push(() => embedded.stop());
      temporalAddress = embedded.address;
      temporalUiUrl = embedded.uiUrl;
    }

    // One connection through the SDK's Rust core for the client and the workers alike: a workflow
    // start costs the serving event loop about half the CPU it costs over @grpc/grpc-js (bench/create.ts).
    installTemporalRuntime(logger, config);
    // The dev server just started opens its port before its frontend serves: asked again for up to a minute.
    const connection = await connectTemporal(temporalAddress, config.temporal.address ? 0 : 60_000);
    stops.push(() => connection.close());
    const temporal = new Client({ connection, namespace: config.temporal.namespace, interceptors: clientInterceptors(tracing?.clientInterceptors) });

    // One registry per process: an API and a worker in one process count into the same one.
    const metricsRegistry = createMetricsRegistry();
    const { metrics } = metricsRegistry;
    countUnstartedLinks(metricsRegistry, () => unstartedBacklog(pool, 60), logger);
    countUndispatchedEvents(metricsRegistry, () => undispatchedBacklog(pool, 60), logger);
    let workers: WorkerSet | undefined;
    if (opts.worker) {
      workers = await createWorkers({ connection, namespace: config.temporal.namespace, deps: { pool, config, temporal, rates: rateServiceFor(config, pool), logger, metrics, tracer: tracing?.tracer }, tracing: tracing?.worker });
      if (config.workerMetricsPort !== undefined) {
        // A taken port (a second worker on one machine) costs this worker its metrics port, never its work.
        const server = await serveMetrics(metricsRegistry, config.host, config.workerMetricsPort).catch((err) => {
          logger.warn({ err, port: config.workerMetricsPort }, 'could not serve worker metrics (WORKER_METRICS_PORT); running without them');
          return undefined;
        });
        if (server) {
          stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
          logger.info({ port: config.workerMetricsPort }, 'worker metrics on GET /metrics');
        }
      }
      // Before any watcher tick: a watcher resuming from its cursor then matches the backfilled addresses.
      await backfillLegacyDerivedAddresses(pool)
        .then((stores) => stores && logger.info({ stores }, 'wrote the derived addresses of marks from before migration 0011'))
        .catch((err) => logger.warn({ err }, 'could not backfill derived addresses; the next start tries again'));
      // Gaps after a store's highest derived index that a derive's after-answer fill did not write (a crash), or a key registered since.
      await fillIncompleteGaps(pool)
        .then((stores) => stores && logger.info({ stores }, 'filled the derived-address gaps left incomplete'))
        .catch((err) => logger.warn({ err }, 'could not fill the derived-address gaps; the next start or derive tries again'));
      const runPromise = workers.run();
      // A fresh dev server registers its namespace a moment after it answers: keep trying for a minute.
      void retryForAMinute(() => ensureWatchersForOpenWork(pool, temporal, config), logger, 'could not check the chain watchers at start');
      void retryForAMinute(() => ensureWebhookSweeper({ temporal, config }), logger, 'could not start the webhook outbox sweeper');
      void retryForAMinute(() => ensureReconciler({ temporal, config }), logger, 'could not start the reconciler');
      void retryForAMinute(() => ensureMpesaPull({ temporal, config }), logger, 'could not start the scheduled M-Pesa pull');
      runPromise.catch((err) => logger.fatal({ err }, 'worker failed'));
      stops.push(() => workers!.shutdown());
    }

    let apiUrl: string | undefined;
    if (opts.api) {
      const rateLimitStore: RateLimitStore = config.redisUrl ? redisRateLimitStore(config.redisUrl) : memoryRateLimitStore();
      stops.push(() => rateLimitStore.close());
      const rates = rateServiceFor(config, pool);
      // The dashboard links workflows to the embedded dev server's UI unless TEMPORAL_UI_URL names one.
      const apiConfig = { ...config, temporal: { ...config.temporal, uiUrl: config.temporal.uiUrl ?? temporalUiUrl } };
      const app: FastifyInstance = await buildApp({ config: apiConfig, pool, temporal, rateLimitStore, rates, logger, metrics, metricsText: metricsRegistry.render, tracer: tracing?.tracer });
      await app.listen({ host: config.host, port: config.port });
      stops.push(() => app.close());
      apiUrl = config.publicBaseUrl;
    }
    return { apiUrl, temporalUiUrl, databaseUrl, temporalAddress, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A collector URL as it may be logged: credentials in it (an operator's `https://user:token@…`) left out. */
function redactedUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return `${parsed.origin}${parsed.pathname}`;
}

/** Runs a start-up step until it succeeds, backing off for about a minute; warns only if it never does. */
async function retryForAMinute(step: () => Promise<unknown>, logger: Logger, warning: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (let waitMs = 250; ; waitMs = Math.min(waitMs * 2, 5_000)) {
    try {
      await step();
      return;
    } catch (err) {
      if (Date.now() + waitMs > deadline) return void logger.warn({ err }, warning);
      await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
    }
  }
}
