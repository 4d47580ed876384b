import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { Metrics } from '../domain/metrics.js';
import type { ServiceSettings } from '../services/settings.js';
import { createChainActivities } from './chains/index.js';
import { createLinkActivities } from './links/index.js';
import { createMobileMoneyActivities } from './mobile-money/index.js';
import { createReconciliationActivities } from './reconciliation/index.js';
import { createSystemActivities } from './system/index.js';
import { createWebhookActivities } from './webhooks/index.js';

export interface ActivityDeps {
  pool: DatabasePool;
  config: ServiceSettings;
  /** For activities that start or signal workflows (webhook fan-out, chain watchers → links). */
  temporal: Client;
  /** Where activities log what an operator should see (chain outages: rails/chain/outage.ts). */
  logger?: Pick<Logger, 'warn' | 'info'>;
  /** Where counts go (runtime/metrics.ts); none, nothing is counted. */
  metrics?: Metrics;
  /** With tracing on (runtime/tracing.ts): the tracer of the webhook POSTs' client spans; none, no span. */
  tracer?: Tracer;
}

/** The worker registers what this returns; tests call it with real parts. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createSystemActivities(deps),
    ...createLinkActivities(deps),
    ...createChainActivities(deps),
    ...createWebhookActivities(deps),
    ...createMobileMoneyActivities(deps),
    ...createReconciliationActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
