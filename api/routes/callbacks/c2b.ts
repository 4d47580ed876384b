import { z } from 'zod/v4';
import { c2bPostSchema } from '../../../rails/mpesa/c2b.js';
import { confirmC2bPayment, validateC2bPayment } from '../../../services/mpesa/c2b-callbacks.js';
import { pullNoticePath } from '../../../services/mpesa/c2b-pull.js';
import { receivePullNotice } from '../../../services/mpesa/pull-notices.js';
import { defineRoute } from '../../route.js';

/**
 * Where Daraja POSTs paybill and till payments made from the M-Pesa menu (C2B). No API key:
 * Daraja cannot send one. The path holds the per-shortcode token registered on connect; an
 * unknown token is a 404, kept as a suspicious post, and changes nothing else.
 */
const params = z.object({ token: z.string().regex(/^[0-9a-z]{40}$/) });

export const c2bValidationRoute = defineRoute({
  method: 'POST',
  url: '/v1/callbacks/c2b/:token/validation',
  operationId: 'receiveC2bValidation',
  summary: 'M-Pesa C2B validation (called by Safaricom, not by merchants): accept or refuse a paybill payment before it completes',
  tags: ['Callbacks'],
  auth: 'none',
  params,
  body: c2bPostSchema,
  responses: {
    200: {
      description: "ResultCode '0' accepts the payment; 'C2B00012' (invalid account number) makes M-Pesa refuse it, and the customer keeps the money",
      schema: z.object({ ResultCode: z.enum(['0', 'C2B00012']), ResultDesc: z.enum(['Accepted', 'Rejected']) }),
    },
  },
  handler: async ({ deps, params, body, request }) => validateC2bPayment({ ...deps, logger: request.log as never }, params.token, body),
});

export const c2bConfirmationRoute = defineRoute({
  method: 'POST',
  url: '/v1/callbacks/c2b/:token/confirmation',
  operationId: 'receiveC2bConfirmation',
  summary: 'M-Pesa C2B confirmation (called by Safaricom, not by merchants): a completed paybill or till payment',
  tags: ['Callbacks'],
  auth: 'none',
  params,
  body: c2bPostSchema,
  responses: {
    200: {
      description: 'Recorded (a repeated TransID counts once); the acknowledgement Daraja expects',
      schema: z.object({ ResultCode: z.literal('0'), ResultDesc: z.literal('Accepted') }),
    },
  },
  handler: async ({ deps, params, body, request }) => confirmC2bPayment({ ...deps, logger: request.log as never }, params.token, body),
});

export const pullNoticeRoute = defineRoute({
  method: 'POST',
  url: pullNoticePath,
  operationId: 'receivePullTransactionsNotice',
  summary: "M-Pesa Pull Transactions notice (called by Safaricom, not by merchants): news about the shortcode's Pull registration",
  tags: ['Callbacks'],
  auth: 'none',
  // Unauthenticated and written to the database: a tight limit per client.
  rateLimitPerMinute: 30,
  body: z.unknown().describe('As Safaricom sends it (no documented shape): only a bounded summary of its top-level fields is kept'),
  bodyOptional: true,
  responses: {
    200: { description: 'Acknowledged; the notice changes nothing', schema: z.object({ ResultCode: z.literal('0'), ResultDesc: z.literal('Accepted') }) },
  },
  handler: async ({ deps, body, request }) => receivePullNotice({ pool: deps.pool, logger: request.log as never }, body),
});
