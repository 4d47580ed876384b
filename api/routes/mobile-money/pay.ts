import { z } from 'zod/v4';
import { phoneFormatHint } from '../../../domain/phone.js';
import { sendMobileMoneyPrompt } from '../../../services/mpesa/prompt.js';
import { requireLink } from '../../../services/payment-links/payment-links.js';
import { defineRoute } from '../../route.js';

export const payWithMobileMoneyRoute = defineRoute({
  method: 'POST',
  url: '/v1/merchant/payment-links/:linkId/pay/mobile-money',
  operationId: 'payWithMobileMoney',
  summary: "Send the M-Pesa prompt (STK push) to the customer's phone; the link goes PENDING → PROCESSING",
  tags: ['Mobile money'],
  auth: 'secret',
  rateLimitPerMinute: 60,
  params: z.object({ linkId: z.string().regex(/^pl_[0-9a-z]{24}$/) }),
  body: z.strictObject({ phoneNumber: z.string().describe(`The paying phone: ${phoneFormatHint}`).meta({ example: '254712345678' }) }),
  responses: {
    200: {
      description: 'The prompt was accepted by M-Pesa; completion is learned from GET /v1/payment-links/:id or the payment_link.confirmed webhook',
      schema: z.object({ ok: z.literal(true), checkoutRequestId: z.string().describe("M-Pesa's CheckoutRequestID") }),
    },
  },
  handler: async ({ deps, auth, params, body, request }) => {
    // Another store's link, or one of the other environment, is a 404 like an unknown one.
    await requireLink(deps, auth, params.linkId);
    return sendMobileMoneyPrompt(deps, params.linkId, body.phoneNumber, request.log);
  },
});
