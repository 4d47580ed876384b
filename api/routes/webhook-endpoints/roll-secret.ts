import { z } from 'zod/v4';
import { rollWebhookSecret } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { endpointIdParams } from './schemas.js';

const rolledSchema = z.object({ id: z.string(), secret: z.string(), previousSecretExpiresAt: z.string() });

export const rollWebhookEndpointSecret = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints/:id/roll-secret',
  operationId: 'rollWebhookEndpointSecret',
  summary: 'Issue a new signing secret; the old one keeps signing for 24 hours (both signatures are sent)',
  tags: ['Webhooks'],
  auth: 'secret',
  // An Idempotency-Key replay answers with the same new secret, kept encrypted in the idempotency record.
  idempotency: { sealedFields: ['secret'] },
  params: endpointIdParams,
  responses: {
    200: { description: 'The new secret, shown only here', schema: rolledSchema },
  },
  handler: async ({ deps, auth, params }) => rollWebhookSecret(deps, auth, params.id),
});
