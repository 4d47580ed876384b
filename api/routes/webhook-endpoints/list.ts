import { z } from 'zod/v4';
import { listWebhookEndpoints as listEndpoints } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { endpointSchema } from './schemas.js';

export const listWebhookEndpoints = defineRoute({
  method: 'GET',
  url: '/v1/webhook-endpoints',
  operationId: 'listWebhookEndpoints',
  summary: "The key's store's webhook endpoints in its environment, newest first (never their secrets)",
  tags: ['Webhooks'],
  auth: 'secret',
  responses: { 200: { description: 'Endpoints', schema: z.object({ data: z.array(endpointSchema) }) } },
  handler: async ({ deps, auth }) => ({ data: await listEndpoints(deps, auth) }),
});
