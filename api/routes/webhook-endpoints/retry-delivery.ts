import { z } from 'zod/v4';
import { retryWebhookDelivery as retryDelivery } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { deliverySchema, endpointIdParams } from './schemas.js';

export const retryWebhookDelivery = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints/:id/deliveries/:deliveryId/retry',
  operationId: 'retryWebhookDelivery',
  summary: "Send a delivery's event to the endpoint again now; answers with the new attempt",
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams.extend({ deliveryId: z.string() }),
  responses: { 200: { description: 'The new attempt (it may have failed: see status and error)', schema: deliverySchema } },
  handler: async ({ deps, auth, params }) => retryDelivery(deps, auth, params.id, params.deliveryId),
});
