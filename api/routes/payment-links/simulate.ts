import { z } from 'zod/v4';
import { railIdSchema } from '../../rail-schema.js';
import { simulateStorePayment } from '../../../services/payment-links/payment-links.js';
import { defineRoute } from '../../route.js';
import { linkIdParams, paymentLinkDetailSchema } from './schemas.js';

export const simulatePaymentRoute = defineRoute({
  method: 'POST',
  url: '/v1/payment-links/:id/simulate-payment',
  operationId: 'simulatePayment',
  summary: 'Test keys only: pay the link through the real workflow path with a simulated payment',
  tags: ['Payment links'],
  auth: 'secret',
  params: linkIdParams,
  body: z.strictObject({ rail: railIdSchema() }),
  responses: { 200: { description: 'The link after the payment', schema: paymentLinkDetailSchema } },
  handler: async ({ deps, auth, params, body }) => simulateStorePayment(deps, auth, params.id, body.rail),
});
