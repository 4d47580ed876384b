import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { Metrics } from '../domain/metrics.js';
import type { ServiceSettings } from '../services/settings.js';
import type { RateService } from '../services/rates/rate-service.js';

/** What the activities are built from (the worker hands it to `createActivities`, activities/index.ts). */
export interface ActivityDeps {
  pool: DatabasePool;
  config: ServiceSettings;
  /** For activities that start or signal workflows (webhook fan-out, chain watchers → links). */
  temporal: Client;
  /** Where activities log what an operator should see (chain outages: rails/chain/outage.ts). */
  logger?: Pick<Logger, 'warn' | 'info'>;
  /**
   * The KES rate a payment is valued at when it is counted (docs/reports.md); none: payments are
   * counted with no KES value for USDT and the reason says so (M-Pesa payments need no rate).
   */
  rates?: RateService;
  /** Where counts go (runtime/metrics.ts); none, nothing is counted. */
  metrics?: Metrics;
  /** With tracing on (runtime/tracing.ts): the tracer of the webhook POSTs' client spans; none, no span. */
  tracer?: Tracer;
}
