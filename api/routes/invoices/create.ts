import { z } from 'zod/v4';
import { invoiceNetworks } from '../../../services/invoices/dto.js';
import { createInvoice } from '../../../services/invoices/invoices.js';
import { defineRoute } from '../../route.js';
import { metadataSchema, usdtAmountSchema } from '../common-schemas.js';
import { invoiceSchema } from './schemas.js';

export const createInvoiceRoute = defineRoute({
  method: 'POST',
  url: '/v1/invoices',
  operationId: 'createInvoice',
  summary: 'Create a single-network USDT invoice (environment from the key)',
  tags: ['Invoices'],
  auth: 'secret',
  body: z.strictObject({
    amount: usdtAmountSchema,
    network: z.enum(invoiceNetworks),
    token: z.literal('USDT', { error: 'only USDT is supported' }).default('USDT'),
    metadata: metadataSchema.optional(),
    expiresInMinutes: z.number().int('must be an integer').min(1).max(43_200).default(1440),
  }),
  responses: { 201: { description: 'Created (the same shape as the public lookup)', schema: invoiceSchema } },
  handler: async ({ deps, auth, body, reply, ids }) => {
    reply.status(201);
    return createInvoice(deps, auth, body, ids);
  },
});
