import { z } from 'zod/v4';
import { ensureOutboxSweeper } from '../../../activities/webhooks/dispatch.js';
import { resolveDestination } from '../../../activities/webhooks/destination.js';
import { encryptWebhookSecret } from '../../../activities/webhooks/secrets.js';
import { countEndpoints, insertEndpoint, type Scope } from '../../../db/webhook-repo.js';
import { AppError } from '../../../domain/errors.js';
import { newId } from '../../../domain/ids.js';
import { defaultEnabledEvents, webhookEventTypes, type WebhookEventType } from '../../../domain/webhooks/event-types.js';
import { generateWebhookSecret } from '../../../domain/webhooks/signing.js';
import type { ApiDeps } from '../../deps.js';
import { defineRoute } from '../../route.js';
import { endpointDto, endpointSchema, secretsKeyring } from './schemas.js';

/** Per store and environment; enough for fan-out to several systems, bounded for the worker. */
export const maxEndpointsPerStore = 50;

const createdSchema = endpointSchema.extend({ secret: z.string() });

/**
 * Registers an endpoint (the API route and the dashboard both go through here): the URL policy,
 * the per-store limit, then a fresh `whsec_` secret stored only as a ciphertext bound to the
 * endpoint's id. The plaintext secret is in the answer and nowhere else.
 */
export async function registerWebhookEndpoint(
  deps: ApiDeps,
  scope: Scope,
  input: { url: string; enabledEvents?: readonly WebhookEventType[] },
): Promise<z.infer<typeof createdSchema>> {
  const dest = await resolveDestination(input.url, scope.environment, deps.config.webhooks);
  let url: URL;
  if (dest.ok) url = dest.url;
  // A test URL whose host does not resolve yet (a tunnel not started) is accepted: every delivery checks it again.
  else if (scope.environment === 'test' && dest.unresolvedUrl) url = dest.unresolvedUrl;
  else throw new AppError('invalid_field', `Invalid 'url': it ${dest.message}.`, 'url');
  if ((await countEndpoints(deps.pool, scope)) >= maxEndpointsPerStore) {
    throw new AppError('invalid_state', `A store can have at most ${maxEndpointsPerStore} webhook endpoints per environment; delete one first.`);
  }
  // Live needs ENCRYPTION_KEY (403 otherwise), checked before anything is written.
  const keyring = await secretsKeyring(deps, scope.environment);
  // The ciphertext is bound to the endpoint id, so the id is chosen before the insert.
  const id = newId('webhookEndpoint');
  const secret = generateWebhookSecret();
  const stored = encryptWebhookSecret(keyring, { storeId: scope.storeId, environment: scope.environment, endpointId: id }, secret);
  const row = await insertEndpoint(deps.pool, { ...scope, id, url: url.href, enabledEvents: input.enabledEvents ?? defaultEnabledEvents, secret: stored });
  // The outbox safety net must run wherever endpoints exist; starting it is a no-op when it does.
  await ensureOutboxSweeper(deps).catch((err) => deps.logger?.warn({ err }, 'could not start the webhook outbox sweeper'));
  return { ...endpointDto(row), secret };
}

export const createWebhookEndpoint = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  operationId: 'createWebhookEndpoint',
  summary: 'Register a URL for webhooks; the signing secret is shown once',
  tags: ['Webhooks'],
  auth: 'secret',
  // An Idempotency-Key replay answers with the same secret, kept encrypted in the idempotency record.
  idempotency: { sealedFields: ['secret'] },
  body: z.strictObject({
    url: z.string().describe('https URL to a public host (with a test key, http too, and private networks the operator allows)').meta({ example: 'https://shop.example.com/malipo/webhooks' }),
    enabledEvents: z
      .array(z.enum(webhookEventTypes))
      .min(1)
      .refine((a) => new Set(a).size === a.length, 'must not repeat an event type')
      .optional()
      .describe('Event types to receive; every type when omitted'),
  }),
  responses: {
    201: { description: 'The endpoint, with its whsec_ secret (shown only here)', schema: createdSchema },
  },
  handler: async ({ deps, auth, body, reply }) => {
    const created = await registerWebhookEndpoint(deps, { storeId: auth.storeId, environment: auth.environment }, body);
    reply.status(201);
    return created;
  },
});
