import { defineRoute } from '../../route.js';
import { endpointDto, endpointIdParams, endpointSchema, ownedEndpoint } from './schemas.js';

export const getWebhookEndpoint = defineRoute({
  method: 'GET',
  url: '/v1/webhook-endpoints/:id',
  operationId: 'getWebhookEndpoint',
  summary: 'One webhook endpoint, with its status and why it was disabled',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: { 200: { description: 'The endpoint', schema: endpointSchema } },
  handler: async ({ deps, auth, params }) => endpointDto(await ownedEndpoint(deps, auth, params.id)),
});
