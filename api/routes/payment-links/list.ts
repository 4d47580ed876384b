import { z } from 'zod/v4';
import { linkStatuses } from '../../../domain/states.js';
import { listPaymentLinks } from '../../../services/payment-links/payment-links.js';
import { defineRoute } from '../../route.js';
import { paymentLinkSchema } from './schemas.js';

const intParam = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be an integer from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be an integer from ${min} to ${max}`).max(max, `must be an integer from ${min} to ${max}`))
    .default(fallback);

export const listPaymentLinksRoute = defineRoute({
  method: 'GET',
  url: '/v1/payment-links',
  operationId: 'listPaymentLinks',
  summary: "List the store's payment links, newest first",
  tags: ['Payment links'],
  auth: 'secret',
  query: z.strictObject({
    status: z.enum(linkStatuses).optional(),
    merchantRef: z.string().min(1).max(200).optional().describe('Only links whose merchantRef is exactly this (case-sensitive)'),
    limit: intParam(1, 100, 20),
    page: intParam(1, 1_000_000, 1),
  }),
  responses: {
    200: {
      description: 'One page',
      schema: z.object({ data: z.array(paymentLinkSchema), page: z.number(), limit: z.number(), total: z.number(), hasMore: z.boolean() }),
    },
  },
  handler: async ({ deps, auth, query }) => listPaymentLinks(deps, auth, query),
});
