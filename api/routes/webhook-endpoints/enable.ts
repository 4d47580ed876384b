import { enableEndpoint } from '../../../db/webhook-repo.js';
import { notFound } from '../../../domain/errors.js';
import { defineRoute } from '../../route.js';
import { endpointDto, endpointIdParams, endpointSchema, ownedEndpoint } from './schemas.js';

export const enableWebhookEndpoint = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints/:id/enable',
  operationId: 'enableWebhookEndpoint',
  summary: 'Enable a disabled endpoint again (new events only; resend missed ones from the delivery log)',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: { 200: { description: 'The endpoint, enabled', schema: endpointSchema } },
  handler: async ({ deps, auth, params }) => {
    const row = await ownedEndpoint(deps, auth, params.id);
    const enabled = await enableEndpoint(deps.pool, auth, row.id);
    if (!enabled) throw notFound('webhook endpoint');
    return endpointDto(enabled);
  },
});
