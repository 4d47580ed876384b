import { createHash } from 'node:crypto';
import { z } from 'zod/v4';
import { findCheckoutLink } from '../../../db/payment-link-repo.js';
import { notFound } from '../../../domain/errors.js';
import { checkoutDto } from '../../dto/checkout.js';
import { defineRoute } from '../../route.js';

export const linkIdParam = z.object({ id: z.string().regex(/^pl_[0-9a-z]{24}$/) });

/** The hosted checkout's data, polled by the page every 4 seconds (ETag: unchanged polls are 304). */
export const getCheckoutRoute = defineRoute({
  method: 'GET',
  url: '/v1/checkout/:id',
  operationId: 'getCheckout',
  summary: 'Public: what the hosted checkout page shows for a payment link',
  tags: ['Checkout'],
  auth: 'none',
  rateLimitPerMinute: 300,
  params: linkIdParam,
  responses: { 200: { description: 'Checkout data' }, 304: { description: 'Not modified' } },
  handler: async ({ deps, params, request, reply }) => {
    const found = await findCheckoutLink(deps.pool, params.id);
    if (!found) throw notFound('payment link');
    const body = checkoutDto(found.row, found.storeName, deps.config.publicBaseUrl);
    const etag = `W/"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
    reply.header('etag', etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === etag) return reply.status(304).send();
    return body;
  },
});
