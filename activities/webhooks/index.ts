import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Metrics } from '../../domain/metrics.js';
import type { ServiceSettings } from '../../services/settings.js';
import { createDeliveryActivities } from './deliver.js';
import { createDispatchActivities } from './dispatch.js';

/** Webhook activities, registered on every worker; the workflows run them on the `webhooks` queue. */
export function createWebhookActivities(deps: { pool: DatabasePool; temporal: Client; config: ServiceSettings; metrics?: Metrics; tracer?: Tracer }) {
  const dispatch = createDispatchActivities(deps);
  return {
    ...dispatch,
    // What a delivery raises about its endpoint (disabled, exhausted) fans out without waiting on endpoints.
    ...createDeliveryActivities({ ...deps, announce: (eventId) => dispatch.dispatchEventToWorkflows({ eventId }) }),
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
export type { DeliverAttemptResult, AttemptOutcome } from './deliver.js';
