import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import { testEventType } from '../../../domain/webhooks/event-types.js';
import { sendTestEvent } from '../../../services/webhooks/test-event.js';
import { defineRoute } from '../../route.js';
import { deliverySchema, endpointIdParams } from './schemas.js';

const testEventSchema = z.object({
  event: z
    .object({
      id: z.string().describe('The event id, evt_…, also sent as the webhook-id header'),
      type: z.literal(testEventType),
      createdAt: z.string(),
      environment: z.enum(environments),
      data: z.object({ endpointId: z.string(), url: z.string(), message: z.string() }),
    })
    .describe('The event as delivered (the body your endpoint receives)'),
  firstAttempt: deliverySchema
    .nullable()
    .describe('The first attempt when it finished within 15 s (it may have failed: see status); null otherwise. Later attempts follow the retry schedule and show in the delivery log'),
});

export const sendWebhookTestEvent = defineRoute({
  method: 'POST',
  url: '/v1/webhook-endpoints/:id/test',
  operationId: 'sendWebhookTestEvent',
  summary: 'Send a signed webhook_endpoint.tested event to this endpoint only, through the normal delivery (retried, logged)',
  tags: ['Webhooks'],
  auth: 'secret',
  params: endpointIdParams,
  responses: { 202: { description: 'The event is being delivered; its first attempt if it finished in time', schema: testEventSchema } },
  handler: async ({ deps, auth, params, reply, ids }) => {
    // The event id is reserved on an Idempotency-Key: a retried request sends no second event.
    const result = await sendTestEvent(deps, auth, params.id, await ids.idFor('event'));
    reply.status(202);
    return result;
  },
});
