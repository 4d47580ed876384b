import { findDeliveryById } from '../../../db/webhook-repo.js';
import { deliveryWorkflowId } from '../../../activities/webhooks/dispatch.js';
import { AppError, notFound } from '../../../domain/errors.js';
import { isId, newId } from '../../../domain/ids.js';
import { taskQueueName } from '../../../domain/task-queues.js';
import type { webhookDelivery } from '../../../workflows/index.js';
import { z } from 'zod/v4';
import { defineRoute } from '../../route.js';
import { deliveryDto, deliverySchema, endpointIdParams, ownedEndpoint } from './schemas.js';

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
    const result = await deps.temporal.workflow.execute<typeof webhookDelivery>('webhookDelivery', {
      workflowId: `${deliveryWorkflowId(original.event_id, endpoint.id)}/manual/${deliveryId}`,
      taskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'webhooks'),
      args: [{ eventId: original.event_id, endpointId: endpoint.id, delayScale: 1, manualDeliveryId: deliveryId }],
    });
    const row = await findDeliveryById(deps.pool, deliveryId);
    if (!row) throw new AppError('invalid_state', `The endpoint was deleted or disabled before the attempt (${result.outcome}).`);
    return deliveryDto(row);
  },
});
