import { z } from 'zod/v4';
import { listEndpoints } from '../../../db/webhook-repo.js';
import { defineRoute } from '../../route.js';
import { endpointDto, endpointSchema } from './schemas.js';

export const listWebhookEndpoints = defineRoute({
  method: 'GET',
  url: '/v1/webhook-endpoints',
  operationId: 'listWebhookEndpoints',
  summary: "The key's store's webhook endpoints in its environment, newest first (never their secrets)",
  tags: ['Webhooks'],
  auth: 'secret',
  responses: { 200: { description: 'Endpoints', schema: z.object({ data: z.array(endpointSchema) }) } },
  handler: async ({ deps, auth }) => {
    const rows = await listEndpoints(deps.pool, { storeId: auth.storeId, environment: auth.environment });
    return { data: rows.map(endpointDto) };
  },
});
