import { z } from 'zod/v4';
import { deliveryWorkflowId } from '../../../activities/webhooks/dispatch.js';
import { findDeliveryById } from '../../../db/webhook-repo.js';
import { AppError, notFound } from '../../../domain/errors.js';
import { isId, newId } from '../../../domain/ids.js';
import { searchAttributes } from '../../../domain/search-attributes.js';
import { taskQueueName } from '../../../domain/task-queues.js';
import type { webhookDelivery } from '../../../workflows/index.js';
import { defineRoute } from '../../route.js';
import { deliveryDto, deliverySchema, endpointIdParams, ownedEndpoint } from './schemas.js';

/** The attempt itself takes at most 10 s; past this the webhooks workers are down or saturated. */
const answerWithinMs = 25_000;

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('upstream_unavailable',
      'The attempt is queued but did not finish in time (the webhook workers may be busy); it will run, and the delivery log will show it.')), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export const retryWebhookDelivery = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints/:id/deliveries/:deliveryId/retry',
  operationId: 'retryWebhookDelivery',
  summary: "Send a delivery's event to the endpoint again now; answers with the new attempt",
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams.extend({ deliveryId: z.string() }),
  responses: { 200: { description: 'The new attempt (it may have failed: see status and error)', schema: deliverySchema } },
  handler: async ({ deps, auth, params }) => {
    const endpoint = await ownedEndpoint(deps, auth, params.id);
    const original = isId('webhookDelivery', params.deliveryId) ? await findDeliveryById(deps.pool, params.deliveryId) : null;
    if (!original || original.endpoint_id !== endpoint.id) throw notFound('delivery');
    if (endpoint.status !== 'enabled') {
      throw new AppError('invalid_state', `The endpoint is disabled (${endpoint.disabled_reason}). Enable it first.`);
    }
    // A one-attempt run of the delivery workflow: the attempt is Temporal work like any other.
    const deliveryId = newId('webhookDelivery');
    const handle = await deps.temporal.workflow.start<typeof webhookDelivery>('webhookDelivery', {
      workflowId: `${deliveryWorkflowId(original.event_id, endpoint.id)}/manual/${deliveryId}`,
      taskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'webhooks'),
      args: [{ eventId: original.event_id, endpointId: endpoint.id, delayScale: 1, manualDeliveryId: deliveryId }],
      typedSearchAttributes: [
        { key: searchAttributes.store, value: auth.storeId },
        { key: searchAttributes.environment, value: auth.environment },
      ],
    });
    const result = await withDeadline(handle.result(), answerWithinMs);
    const row = await findDeliveryById(deps.pool, deliveryId);
    if (!row) throw new AppError('invalid_state', `The endpoint was deleted or disabled before the attempt (${result.outcome}).`);
    return deliveryDto(row);
  },
});
