import { z } from 'zod/v4';
import { AppError } from '../../../domain/errors.js';
import { checkPhoneNumber, phoneFormatHint } from '../../../domain/phone.js';
import { paymentLinkWorkflowId, startMobileMoneyPayment } from '../../../workflows/payment-link-contract.js';
import { requireLink } from '../../services/payment-links.js';
import { defineRoute } from '../../route.js';
import { payErrorFromUpdate } from './pay-errors.js';

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
    const phone = checkPhoneNumber(body.phoneNumber);
    if (!phone.ok) throw new AppError('invalid_field', `Invalid 'phoneNumber': ${phone.message}`, 'phoneNumber');
    // Another store's link, or one of the other environment, is a 404 like an unknown one.
    await requireLink(deps, auth, params.linkId);
    try {
      const result = await deps.temporal.workflow
        .getHandle(paymentLinkWorkflowId(params.linkId))
        .executeUpdate(startMobileMoneyPayment, { args: [{ phoneNumber: phone.phone }] });
      return { ok: true as const, checkoutRequestId: result.checkoutRequestId };
    } catch (err) {
      const mapped = payErrorFromUpdate(err);
      if (mapped) {
        if (mapped.status >= 500) request.log.warn({ err, linkId: params.linkId }, 'M-Pesa prompt failed');
        throw mapped;
      }
      request.log.error({ err, linkId: params.linkId }, 'M-Pesa prompt update failed');
      throw new AppError('upstream_failed', 'The payment engine could not send the prompt; retry shortly.');
    }
  },
});
