import { z } from 'zod/v4';
import { rollEndpointSecret } from '../../../db/webhook-repo.js';
import { notFound } from '../../../domain/errors.js';
import { generateWebhookSecret } from '../../../domain/webhooks/signing.js';
import { defineRoute } from '../../route.js';
import { endpointIdParams, ownedEndpoint } from './schemas.js';

/** How long the old secret keeps signing next to the new one: time to deploy the new secret. */
export const secretOverlapSeconds = 24 * 3600;

export const rollWebhookEndpointSecret = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints/:id/roll-secret',
  operationId: 'rollWebhookEndpointSecret',
  summary: 'Issue a new signing secret; the old one keeps signing for 24 hours (both signatures are sent)',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: {
    200: {
      description: 'The new secret, shown only here',
      schema: z.object({ id: z.string(), secret: z.string(), previousSecretExpiresAt: z.string() }),
    },
  },
  handler: async ({ deps, auth, params }) => {
    const row = await ownedEndpoint(deps, auth, params.id);
    const secret = generateWebhookSecret();
    const rolled = await rollEndpointSecret(deps.pool, auth, row.id, secret, secretOverlapSeconds);
    if (!rolled) throw notFound('webhook endpoint');
    return { id: rolled.id, secret, previousSecretExpiresAt: rolled.previous_secret_expires_at! };
  },
});
