import { z } from 'zod/v4';
import { encryptWebhookSecret, protectStoredSecret } from '../../../activities/webhooks/secrets.js';
import { rollEndpointSecret, type Scope } from '../../../db/webhook-repo.js';
import { notFound } from '../../../domain/errors.js';
import { generateWebhookSecret } from '../../../domain/webhooks/signing.js';
import type { ApiDeps } from '../../deps.js';
import { defineRoute } from '../../route.js';
import { endpointIdParams, ownedEndpoint, secretsKeyring } from './schemas.js';

/** How long the old secret keeps signing next to the new one: time to deploy the new secret. */
export const secretOverlapSeconds = 24 * 3600;

const rolledSchema = z.object({ id: z.string(), secret: z.string(), previousSecretExpiresAt: z.string() });

/**
 * Issues a new secret for an endpoint of the scope (the API route and the dashboard both go
 * through here). The current ciphertext moves to `previous_secret` as it is (same slot); a
 * legacy plaintext secret is encrypted on the way. Nothing is decrypted.
 */
export async function rollWebhookSecret(deps: ApiDeps, scope: Scope, endpointId: string): Promise<z.infer<typeof rolledSchema>> {
  const row = await ownedEndpoint(deps, scope, endpointId);
  const keyring = await secretsKeyring(deps, scope.environment);
  const ref = { storeId: scope.storeId, environment: scope.environment, endpointId: row.id };
  const secret = generateWebhookSecret();
  const rolled = await rollEndpointSecret(deps.pool, scope, row.id, encryptWebhookSecret(keyring, ref, secret), secretOverlapSeconds, (stored) =>
    protectStoredSecret(keyring, ref, stored),
  );
  if (!rolled) throw notFound('webhook endpoint');
  return { id: rolled.id, secret, previousSecretExpiresAt: rolled.previous_secret_expires_at! };
}

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
  handler: async ({ deps, auth, params }) => rollWebhookSecret(deps, { storeId: auth.storeId, environment: auth.environment }, params.id),
});
