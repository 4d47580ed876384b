// One app of the observability bench (bench/observability.ts), in a process of its own:
// `node bin/run-ts.mjs bench/observability-server.ts '<json>'` serves the seeded database with
// metrics and tracing both on (`observed`) or both off, and prints {"port":…} once it listens.
// Separate processes, because tracing is process-wide: a registered provider is found by every
// library that asks OpenTelemetry's API for a tracer (slonik does, for each query), so an app
// with tracing off in the same process would be traced as well.
import { AsyncLocalStorage } from 'node:async_hooks';
import { RateService } from '../services/rates/rate-service.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { loadConfig } from '../config/config.js';
import { openPool } from '../db/pool.js';
import { buildApp } from '../runtime/http-app.js';
import { createMetricsRegistry } from '../runtime/metrics.js';

const spec = JSON.parse(process.argv[2]!) as { databaseUrl: string; observed: boolean; env: Record<string, string> };
const config = loadConfig({ DATABASE_URL: spec.databaseUrl, PORT: '0', LOG_LEVEL: 'silent', CHAIN_WATCHERS: 'off', TRUST_PROXY: '127.0.0.1', ...(spec.observed ? spec.env : {}) });
const pool = await openPool(spec.databaseUrl, 10, { preparedStatements: config.databasePreparedStatements });
// As any API process is from its first workflow start (NativeConnection.withDeadline runs one) and
// every worker: an AsyncLocalStorage has run, which on Node 20 every promise then pays for.
new AsyncLocalStorage<number>().run(1, () => undefined);
const tracing = spec.observed && config.tracing ? (await import('../runtime/tracing.js')).startTracing(config.tracing, 'malipo-api') : undefined;
const registry = spec.observed ? createMetricsRegistry() : undefined;
const app = await buildApp({
  config: spec.observed ? config : { ...config, metricsToken: undefined },
  pool,
  temporal: undefined as never,
  rates: new RateService({ testKesPerUsdt: '130', sources: [] }),
  rateLimitStore: memoryRateLimitStore(),
  metrics: registry?.metrics,
  metricsText: registry?.render,
  tracer: tracing?.tracer,
});
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(JSON.stringify({ port: (app.server.address() as { port: number }).port }));
process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await tracing?.shutdown();
    await pool.end();
    process.exit(0);
  })();
});
