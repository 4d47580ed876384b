import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import { deliveredEventTypes, webhookEventTypes } from '../../../domain/webhooks/event-types.js';
import type { DeliveryDto, EndpointDto } from '../../../services/webhooks/dto.js';
import type { Same } from '../../schema-types.js';

export const endpointSchema = z.object({
  id: z.string().describe('Webhook endpoint id, we_…'),
  url: z.string(),
  enabledEvents: z.array(z.enum(webhookEventTypes)),
  environment: z.enum(environments),
  status: z.enum(['enabled', 'disabled']),
  disabledReason: z.string().nullable().describe('Why Malipo stopped sending (410 Gone, failing for days); null while enabled'),
  disabledAt: z.string().nullable(),
  createdAt: z.string(),
});

export const deliverySchema = z.object({
  id: z.string().describe('Delivery attempt id, wd_…'),
  eventId: z.string().describe('The event id, also sent as the webhook-id header'),
  eventType: z.enum(deliveredEventTypes).describe('The event type; webhook_endpoint.tested for a test event'),
  attempt: z.number().int().describe('1 for the first send of this event to this endpoint, counting manual retries'),
  status: z.enum(['succeeded', 'failed']),
  responseStatus: z.number().int().nullable().describe('HTTP status, null when no response came'),
  latencyMs: z.number().int().nullable(),
  error: z.string().nullable().describe('Why the attempt failed: timeout, refused, non-2xx, redirect…'),
  responseBody: z
    .string()
    .nullable()
    .describe('The start of the response body (at most 1,024 characters); always null for a private address allowed for test webhooks'),
  createdAt: z.string(),
});

export const endpointIdParams = z.object({ id: z.string() });

// The schemas describe exactly what the service returns (services/webhooks/dto.ts).
true satisfies Same<z.infer<typeof endpointSchema>, EndpointDto> & Same<z.infer<typeof deliverySchema>, DeliveryDto>;
