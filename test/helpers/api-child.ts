import { Client, type WorkflowStartOptions } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { buildApp } from '../../runtime/http-app.js';
import { memoryRateLimitStore } from '../../api/plugins/rate-limit.js';
import { rateServiceFor, type RateService } from '../../services/rates/rate-service.js';
import { openPool } from '../../db/pool.js';
import { loadConfig } from '../../config/config.js';
import { handoffFor } from '../../services/payment-links/start-handoff.js';

/**
 * Run as its own process by `spawnCrashingApi` (crashing-api.ts): the real API, except that it
 * kills itself with SIGKILL at the point named by CRASH_AT while serving a request, as a
 * process dies in production (no catch, no finally, no cleanup):
 *
 * - `after-claim`: when the link's rate is read, after the Idempotency-Key was claimed and before
 *   anything was written (a MOBILE_MONEY link reads the rate);
 * - `before-workflow-start`: after the link's (or invoice's) row was written and its start handed
 *   off, before anything is answered or started;
 * - `after-workflow-start`: after the workflow started, before the row records that it runs (the
 *   start runs after the answer, so the answer may have gone out).
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
// As the service connects (runtime/services.ts).
const connection = await NativeConnection.connect({ address: config.temporal.address! });
const temporal = new Client({ connection, namespace: config.temporal.namespace });

// The link (or invoice) is written and its start handed off, nothing answered yet: die there.
const handoff = handoffFor({ pool });
const offer = handoff.offer.bind(handoff);
handoff.offer = (id, run) => (crashAt === 'before-workflow-start' ? die() : offer(id, run));

const start = temporal.workflow.start.bind(temporal.workflow);
temporal.workflow.start = (async (workflowType: string, options: WorkflowStartOptions) => {
  const handle = await start(workflowType, options);
  if (crashAt === 'after-workflow-start' && /^(payment-link|invoice)\//.test(options.workflowId)) die();
  return handle;
}) as typeof temporal.workflow.start;

const realRates = rateServiceFor(config, pool);
const rates = crashAt === 'after-claim' ? ({ kesPerUsdt: async () => die() } as unknown as RateService) : realRates;

const app = await buildApp({ config, pool, temporal, rateLimitStore: memoryRateLimitStore(), rates });
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: (app.server.address() as { port: number }).port })}\n`);
