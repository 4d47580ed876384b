import { z } from 'zod/v4';
import { assignUnallocatedPayment, listUnallocatedPayments, markUnallocatedForRefund } from '../../../services/mpesa/unallocated.js';
import { defineRoute } from '../../route.js';

const intParam = (min: number, max: number, fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be an integer from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be an integer from ${min} to ${max}`).max(max, `must be an integer from ${min} to ${max}`))
    .default(fallback);

const unallocatedPaymentSchema = z
  .object({
    transId: z.string().describe('M-Pesa receipt (TransID)'),
    amount: z.string().describe('TransAmount in whole KES, decimal string'),
    currency: z.literal('KES'),
    transactionType: z.string().nullable(),
    transTime: z.string().nullable().describe('TransTime as Daraja sent it (YYYYMMDDHHmmss, Kenyan time)'),
    billRefNumber: z.string().nullable().describe('The account number the customer typed'),
    payerName: z.string().nullable(),
    msisdn: z.string().nullable().describe('The payer phone as Daraja sends it (masked or hashed)'),
    state: z.enum(['matched', 'unallocated', 'awaiting_evidence', 'counted_as_prompt', 'disputed', 'refund_outside']),
    linkId: z.string().nullable(),
    assignedBy: z.string().nullable(),
    assignedAt: z.string().nullable(),
    refundMarkedBy: z.string().nullable().describe('Marked for refund outside Malipo by: key:<id> or user:<id>'),
    refundMarkedAt: z.string().nullable(),
    refundNote: z.string().nullable(),
    receivedAt: z.string(),
  })
  .meta({ id: 'UnallocatedMobileMoneyPayment' });

export const listUnallocatedRoute = defineRoute({
  method: 'GET',
  url: '/v1/mobile-money/unallocated',
  operationId: 'listUnallocatedMobileMoneyPayments',
  summary: 'Paybill and till payments whose account number matched no link, newest first',
  tags: ['Mobile money'],
  auth: 'secret',
  query: z.strictObject({
    limit: intParam(1, 100, 20),
    page: intParam(1, 1_000_000, 1),
    state: z.enum(['unallocated', 'refund_outside']).default('unallocated').describe('refund_outside: those marked for refund outside Malipo'),
  }),
  responses: {
    200: {
      description: 'One page',
      schema: z.object({ data: z.array(unallocatedPaymentSchema), page: z.number(), limit: z.number(), total: z.number(), hasMore: z.boolean() }),
    },
  },
  handler: async ({ deps, auth, query }) => listUnallocatedPayments(deps, auth, query),
});

export const assignUnallocatedRoute = defineRoute({
  method: 'POST',
  url: '/v1/mobile-money/unallocated/:transId/assign',
  operationId: 'assignUnallocatedMobileMoneyPayment',
  summary: 'Assign an unallocated M-Pesa payment to a link; the link then counts it as usual (audited)',
  tags: ['Mobile money'],
  auth: 'secret',
  params: z.object({ transId: z.string().regex(/^[A-Z0-9]{6,20}$/) }),
  body: z.strictObject({ linkId: z.string().min(1).max(100).describe('A payment link (or invoice) of this store with MOBILE_MONEY') }),
  responses: { 200: { description: 'Assigned; the link counts it shortly', schema: unallocatedPaymentSchema } },
  // Who assigned it is kept with the payment: the API key's id.
  handler: async ({ deps, auth, params, body, request }) =>
    assignUnallocatedPayment({ ...deps, logger: request.log as never }, auth, { transId: params.transId, linkId: body.linkId, by: `key:${auth.keyId}` }),
});

export const refundUnallocatedRoute = defineRoute({
  method: 'POST',
  url: '/v1/mobile-money/unallocated/:transId/refund',
  operationId: 'markUnallocatedMobileMoneyPaymentForRefund',
  summary: 'Mark an unallocated M-Pesa payment for refund outside Malipo (you reverse it with M-Pesa); it then counts nowhere (audited)',
  tags: ['Mobile money'],
  auth: 'secret',
  params: z.object({ transId: z.string().regex(/^[A-Z0-9]{6,20}$/) }),
  body: z.strictObject({ note: z.string().trim().min(1).max(500).optional().describe('Why, or the M-Pesa reversal reference') }),
  responses: { 200: { description: 'Marked', schema: unallocatedPaymentSchema } },
  handler: async ({ deps, auth, params, body, request }) =>
    markUnallocatedForRefund({ ...deps, logger: request.log as never }, auth, { transId: params.transId, by: `key:${auth.keyId}`, note: body.note ?? null }),
});
