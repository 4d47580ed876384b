import { z } from 'zod/v4';
import { notFound } from '../../../domain/errors.js';
import { findPublicInvoice } from '../../../services/invoices/invoices.js';
import { answerUnlessUnchanged } from '../../plugins/etag.js';
import { defineRoute } from '../../route.js';
import { invoiceSchema } from './schemas.js';

/**
 * The public invoice lookup, polled every 4 to 5 seconds by checkout pages. One indexed query;
 * an ETag lets an unchanged poll end in a bodiless 304; `no-cache` makes browsers revalidate.
 */
export const getInvoiceRoute = defineRoute({
  method: 'GET',
  url: '/v1/invoices/:id',
  operationId: 'getInvoice',
  summary: 'Public invoice lookup (no authentication): the safe shape',
  tags: ['Invoices'],
  auth: 'none',
  rateLimitPerMinute: 300,
  params: z.object({ id: z.string().regex(/^inv_[0-9a-z]{24}$/) }),
  responses: { 200: { description: 'The invoice', schema: invoiceSchema }, 304: { description: 'Not modified since the ETag' } },
  handler: async ({ deps, params, request, reply }) => {
    const body = await findPublicInvoice(deps, params.id);
    if (!body) throw notFound('invoice');
    return answerUnlessUnchanged(request, reply, body);
  },
});
