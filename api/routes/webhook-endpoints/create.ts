import { z } from 'zod/v4';
import { webhookEventTypes } from '../../../domain/webhooks/event-types.js';
import { registerWebhookEndpoint } from '../../../services/webhooks/endpoints.js';
import { defineRoute } from '../../route.js';
import { endpointSchema } from './schemas.js';

const createdSchema = endpointSchema.extend({ secret: z.string() });

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
    const created = await registerWebhookEndpoint(deps, auth, body);
    reply.status(201);
    return created;
  },
});
