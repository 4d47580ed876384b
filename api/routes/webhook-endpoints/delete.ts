import { z } from 'zod/v4';
import { deleteWebhookEndpoint as deleteEndpoint } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { endpointIdParams } from './schemas.js';

export const deleteWebhookEndpoint = defineRoute({
  method: 'DELETE',
  url: '/v1/webhook-endpoints/:id',
  operationId: 'deleteWebhookEndpoint',
  summary: 'Delete an endpoint: deliveries in progress stop at their next attempt',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: { 200: { description: 'Deleted', schema: z.object({ id: z.string(), deleted: z.literal(true) }) } },
  handler: async ({ deps, auth, params }) => deleteEndpoint(deps, auth, params.id),
});
