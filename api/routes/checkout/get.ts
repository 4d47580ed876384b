import { notFound } from '../../../domain/errors.js';
import { findCheckout } from '../../../services/checkout/checkout.js';
import { answerUnlessUnchanged } from '../../plugins/etag.js';
import { defineRoute } from '../../route.js';
import { linkIdParams } from '../payment-links/schemas.js';
import { checkoutViewSchema } from './schemas.js';

/** The hosted checkout's data, polled by the page every 4 seconds (ETag: unchanged polls are 304). */
export const getCheckoutRoute = defineRoute({
  method: 'GET',
  url: '/v1/checkout/:id',
  operationId: 'getCheckout',
  summary: 'Public: what the hosted checkout page shows for a payment link',
  tags: ['Checkout'],
  auth: 'none',
  rateLimitPerMinute: 300,
  params: linkIdParams,
  responses: { 200: { description: 'Checkout data', schema: checkoutViewSchema }, 304: { description: 'Not modified' } },
  handler: async ({ deps, params, request, reply }) => {
    const body = await findCheckout(deps, params.id);
    if (!body) throw notFound('payment link');
    return answerUnlessUnchanged(request, reply, body);
  },
});
