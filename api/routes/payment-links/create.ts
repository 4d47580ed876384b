import { z } from 'zod/v4';
import { railIdSchema } from '../../rail-schema.js';
import { metadataSchema, usdtAmountSchema } from '../common-schemas.js';
import { createPaymentLink } from '../../../services/payment-links/payment-links.js';
import { defineRoute } from '../../route.js';
import { paymentLinkSchema } from './schemas.js';

const body = z
  .strictObject({
    usdtAmount: usdtAmountSchema.optional(),
    mobileMoneyAmount: z.number().int('must be a whole number of shillings').min(1).max(250_000).optional(),
    enabledRails: z
      .array(railIdSchema())
      .min(1, 'enable at least one rail')
      .refine((a) => new Set(a).size === a.length, 'must not repeat a rail'),
    description: z.string().max(500).optional(),
    merchantRef: z.string().min(1).max(200).optional(),
    metadata: metadataSchema.optional(),
    expiresInMinutes: z.number().int('must be an integer').min(1).max(43_200).default(1440),
    environment: z
      .never({ error: 'must not be sent: the environment comes from the API key (sk_test_… or sk_live_…)' })
      .optional(),
    redirectUrl: z.url({ protocol: /^https?$/ }).max(2000).optional().describe('Where the checkout sends the customer back'),
  })
  .meta({ id: 'CreatePaymentLink' });

export const createPaymentLinkRoute = defineRoute({
  method: 'POST',
  url: '/v1/payment-links',
  operationId: 'createPaymentLink',
  summary: 'Create a payment link (environment from the key)',
  tags: ['Payment links'],
  auth: 'secret',
  body,
  responses: { 201: { description: 'Created', schema: paymentLinkSchema } },
  handler: async ({ deps, auth, body, reply, ids }) => {
    const { environment: _ignored, ...input } = body;
    reply.status(201);
    return createPaymentLink(deps, auth, input, ids);
  },
});
