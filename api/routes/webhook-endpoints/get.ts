import { getWebhookEndpoint as getEndpoint } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { endpointIdParams, endpointSchema } from './schemas.js';

export const getWebhookEndpoint = defineRoute({
  method: 'GET',
  url: '/v1/webhook-endpoints/:id',
  operationId: 'getWebhookEndpoint',
  summary: 'One webhook endpoint, with its status and why it was disabled',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: { 200: { description: 'The endpoint', schema: endpointSchema } },
  handler: async ({ deps, auth, params }) => getEndpoint(deps, auth, params.id),
});
