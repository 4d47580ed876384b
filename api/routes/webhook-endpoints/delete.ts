import { z } from 'zod/v4';
import { deleteEndpoint } from '../../../db/webhook-repo.js';
import { notFound } from '../../../domain/errors.js';
import { defineRoute } from '../../route.js';
import { endpointIdParams, ownedEndpoint } from './schemas.js';

export const deleteWebhookEndpoint = defineRoute({
  method: 'DELETE',
  url: '/v1/webhook-endpoints/:id',
  operationId: 'deleteWebhookEndpoint',
  summary: 'Delete an endpoint: deliveries in progress stop at their next attempt',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: { 200: { description: 'Deleted', schema: z.object({ id: z.string(), deleted: z.literal(true) }) } },
  handler: async ({ deps, auth, params }) => {
    const row = await ownedEndpoint(deps, auth, params.id);
    if (!(await deleteEndpoint(deps.pool, auth, row.id))) throw notFound('webhook endpoint');
    return { id: row.id, deleted: true as const };
  },
});
