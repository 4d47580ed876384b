import {
  ActivityFailure,
  condition,
  defineSignal,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { DeliverAttemptResult, WebhookActivities } from '../activities/webhooks/index.js';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from '../domain/workflow-contract.js';
import { maxAttempts, retryDelayMs } from '../domain/webhooks/retry-schedule.js';

/**
 * Delivers one event to one endpoint on the Standard Webhooks schedule (workflow id
 * `webhook-delivery/<eventId>/<endpointId>`). The waits are durable timers, so a restart of
 * any process loses nothing; each attempt is one activity call with a fresh signature and the
 * same `webhook-id`. A 2xx ends it; a 410, or an endpoint deleted or disabled meanwhile, ends
 * it early; after the last attempt the endpoint is disabled if it has been failing for days.
 *
 * The same workflow type makes a manual "send again now" (`manualDeliveryId` set): one
 * attempt, and on success it tells the automatic workflow of the pair to stop retrying.
 */
export type { WebhookDeliveryInput, WebhookDeliveryResult };

/** Sent to the automatic workflow when a manual attempt got through. */
export const deliveredManuallySignal = defineSignal('deliveredManually');

const { deliverAttempt } = proxyActivities<WebhookActivities>({
  // 10 s for the HTTP exchange (enforced inside), plus DNS and the log write.
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '5 seconds',
  // Retries cover infrastructure (a dead worker, the database away); HTTP failures are results.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const { concludeExhaustedDelivery } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '10 seconds' },
});

/** A delivery id made inside the workflow: random yet replay-safe (Temporal seeds `uuid4`). */
function newDeliveryId(): string {
  return `wd_${uuid4().replace(/-/g, '').slice(0, 24)}`;
}

async function attempt(input: WebhookDeliveryInput, deliveryId: string, trigger: 'automatic' | 'manual'): Promise<DeliverAttemptResult> {
  try {
    return await deliverAttempt({ eventId: input.eventId, endpointId: input.endpointId, deliveryId, trigger });
  } catch (err) {
    // The attempt could not even run (for minutes): count it as failed and keep the schedule.
    if (err instanceof ActivityFailure) return { outcome: 'failed', deliveryId, responseStatus: null };
    throw err;
  }
}

export async function webhookDelivery(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  if (input.manualDeliveryId) return manualDelivery(input, input.manualDeliveryId);
  let deliveredManually = false;
  setHandler(deliveredManuallySignal, () => {
    deliveredManually = true;
  });
  let last: DeliverAttemptResult | undefined;
  for (let i = 0; i < maxAttempts; i++) {
    const waitMs = retryDelayMs(i, input.delayScale, Math.random());
    if (waitMs > 0 && (await condition(() => deliveredManually, waitMs))) {
      return { outcome: 'delivered_manually', attempts: i, lastDeliveryId: last?.deliveryId ?? null, endpointDisabled: false };
    }
    last = await attempt(input, (i === 0 ? input.firstDeliveryId : undefined) ?? newDeliveryId(), 'automatic');
    if (last.outcome !== 'failed') {
      const outcome = last.outcome === 'succeeded' ? 'delivered' : last.outcome;
      return { outcome, attempts: i + 1, lastDeliveryId: last.deliveryId, endpointDisabled: outcome === 'endpoint_gone' };
    }
  }
  const { disabled } = await concludeExhaustedDelivery({ eventId: input.eventId, endpointId: input.endpointId });
  return { outcome: 'exhausted', attempts: maxAttempts, lastDeliveryId: last?.deliveryId ?? null, endpointDisabled: disabled };
}

async function manualDelivery(input: WebhookDeliveryInput, deliveryId: string): Promise<WebhookDeliveryResult> {
  const r = await attempt(input, deliveryId, 'manual');
  if (r.outcome === 'succeeded') {
    try {
      await getExternalWorkflowHandle(`webhook-delivery/${input.eventId}/${input.endpointId}`).signal(deliveredManuallySignal);
    } catch {
      // The automatic delivery has finished (or never existed): nothing to stop.
    }
  }
  const outcome = r.outcome === 'succeeded' ? 'delivered' : r.outcome;
  return { outcome, attempts: 1, lastDeliveryId: r.deliveryId, endpointDisabled: outcome === 'endpoint_gone' };
}
