import { enableWebhookEndpoint as enableEndpoint } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { endpointIdParams, endpointSchema } from './schemas.js';

export const enableWebhookEndpoint = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints/:id/enable',
  operationId: 'enableWebhookEndpoint',
  summary: 'Enable a disabled endpoint again (new events only; resend missed ones from the delivery log)',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: { 200: { description: 'The endpoint, enabled', schema: endpointSchema } },
  handler: async ({ deps, auth, params }) => enableEndpoint(deps, auth, params.id),
});
