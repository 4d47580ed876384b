import { z } from 'zod/v4';
import { listEndpointDeliveries } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { deliverySchema, endpointIdParams } from './schemas.js';

export const listWebhookDeliveries = defineRoute({
  method: 'GET',
  url: '/v1/webhook-endpoints/:id/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: 'Every delivery attempt to the endpoint, newest first',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  query: z.strictObject({
    limit: z.coerce.number().int().min(1).max(100).default(50).describe('At most this many attempts (1..100, default 50)'),
  }),
  responses: { 200: { description: 'Delivery attempts', schema: z.object({ data: z.array(deliverySchema) }) } },
  handler: async ({ deps, auth, params, query }) => ({ data: await listEndpointDeliveries(deps, auth, params.id, query.limit) }),
});
