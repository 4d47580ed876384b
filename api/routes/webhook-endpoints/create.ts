import { z } from 'zod/v4';
import { ensureOutboxSweeper } from '../../../activities/webhooks/dispatch.js';
import { resolveDestination } from '../../../activities/webhooks/destination.js';
import { countEndpoints, insertEndpoint } from '../../../db/webhook-repo.js';
import { AppError } from '../../../domain/errors.js';
import { defaultEnabledEvents, webhookEventTypes } from '../../../domain/webhooks/event-types.js';
import { generateWebhookSecret } from '../../../domain/webhooks/signing.js';
import { defineRoute } from '../../route.js';
import { endpointDto, endpointSchema } from './schemas.js';

/** Per store and environment; enough for fan-out to several systems, bounded for the worker. */
export const maxEndpointsPerStore = 50;

export const createWebhookEndpoint = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints',
  operationId: 'createWebhookEndpoint',
  summary: 'Register a URL for webhooks; the signing secret is shown once',
  tags: ['Webhooks'],
  auth: 'secret',
  body: z.strictObject({
    url: z.string().describe('https URL (with a test key, http is allowed too)').meta({ example: 'https://shop.example.com/malipo/webhooks' }),
    enabledEvents: z
      .array(z.enum(webhookEventTypes))
      .min(1)
      .refine((a) => new Set(a).size === a.length, 'must not repeat an event type')
      .optional()
      .describe('Event types to receive; every type when omitted'),
  }),
  responses: {
    201: { description: 'The endpoint, with its whsec_ secret (shown only here)', schema: endpointSchema.extend({ secret: z.string() }) },
  },
  handler: async ({ deps, auth, body, reply, request }) => {
    const dest = await resolveDestination(body.url, auth.environment, deps.config.webhooks.dnsServers);
    if (!dest.ok) throw new AppError('invalid_field', `Invalid 'url': it ${dest.message}.`, 'url');
    const scope = { storeId: auth.storeId, environment: auth.environment };
    if ((await countEndpoints(deps.pool, scope)) >= maxEndpointsPerStore) {
      throw new AppError('invalid_state', `A store can have at most ${maxEndpointsPerStore} webhook endpoints per environment; delete one first.`);
    }
    const secret = generateWebhookSecret();
    const row = await insertEndpoint(deps.pool, { ...scope, url: dest.url.href, enabledEvents: body.enabledEvents ?? defaultEnabledEvents, secret });
    // The outbox safety net must run wherever endpoints exist; starting it is a no-op when it does.
    await ensureOutboxSweeper(deps).catch((err) => request.log.warn({ err }, 'could not start the webhook outbox sweeper'));
    reply.status(201);
    return { ...endpointDto(row), secret };
  },
});
