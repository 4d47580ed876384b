import { z } from 'zod/v4';
import { notFound } from '../../../domain/errors.js';
import { phoneFormatHint } from '../../../domain/phone.js';
import { checkoutLinkExists } from '../../../services/checkout/checkout.js';
import { sendMobileMoneyPrompt } from '../../../services/mpesa/prompt.js';
import { defineRoute } from '../../route.js';
import { linkIdParams } from '../payment-links/schemas.js';

/**
 * The hosted checkout's "Send M-Pesa prompt" button. Public like the page itself (the link id is
 * the credential); tightly rate-limited per IP, and the workflow allows one open prompt per link.
 */
export const checkoutPayMobileMoneyRoute = defineRoute({
  method: 'POST',
  url: '/v1/checkout/:id/pay/mobile-money',
  operationId: 'checkoutPayWithMobileMoney',
  summary: 'Public: send the M-Pesa prompt from the hosted checkout',
  tags: ['Checkout'],
  auth: 'none',
  rateLimitPerMinute: 10,
  params: linkIdParams,
  body: z.strictObject({ phoneNumber: z.string().describe(phoneFormatHint) }),
  responses: { 200: { description: 'Prompt sent', schema: z.object({ ok: z.literal(true), checkoutRequestId: z.string() }) } },
  handler: async ({ deps, params, body, request }) => {
    if (!(await checkoutLinkExists(deps, params.id))) throw notFound('payment link');
    return sendMobileMoneyPrompt(deps, params.id, body.phoneNumber, request.log);
  },
});
