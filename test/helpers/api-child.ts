import { Client, Connection, type WorkflowStartOptions } from '@temporalio/client';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { rateServiceFor, type RateService } from '../../activities/rates/rate-service.js';
import { openPool } from '../../db/pool.js';
import { loadConfig } from '../../config/config.js';

/**
 * Run as its own process by `spawnCrashingApi` (crashing-api.ts): the real API, except that it
 * kills itself with SIGKILL at the point named by CRASH_AT while serving a request, as a
 * process dies in production (no catch, no finally, no cleanup):
 *
 * - `after-claim`: when the link's rate is read, after the Idempotency-Key was claimed and before
 *   anything was written (a MOBILE_MONEY link reads the rate);
 * - `before-workflow-start`: after the link's (or invoice's) row was written, before its workflow is started;
 * - `after-workflow-start`: after the workflow started, before the answer is recorded.
 *
 * Prints `{"port":N}` once it listens.
 */
const crashAt = process.env.CRASH_AT;
const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

const config = loadConfig(process.env);
const pool = await openPool(config.databaseUrl!, 2, { preparedStatements: config.databasePreparedStatements });
const connection = await Connection.connect({ address: config.temporal.address! });
const temporal = new Client({ connection, namespace: config.temporal.namespace });

const start = temporal.workflow.start.bind(temporal.workflow);
temporal.workflow.start = (async (workflowType: string, options: WorkflowStartOptions) => {
  if (!/^(payment-link|invoice)\//.test(options.workflowId)) return start(workflowType, options);
  if (crashAt === 'before-workflow-start') die();
  const handle = await start(workflowType, options);
  if (crashAt === 'after-workflow-start') die();
  return handle;
}) as typeof temporal.workflow.start;

const realRates = rateServiceFor(config, pool);
const rates = crashAt === 'after-claim' ? ({ kesPerUsdt: async () => die() } as unknown as RateService) : realRates;

const app = await buildApp({ config, pool, temporal, rateLimitStore: memoryRateLimitStore(), rates });
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: (app.server.address() as { port: number }).port })}\n`);
