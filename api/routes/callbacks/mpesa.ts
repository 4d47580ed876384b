import { z } from 'zod/v4';
import { stkCallbackSchema } from '../../../rails/mpesa/callback.js';
import { receiveStkCallback } from '../../../services/mpesa/callbacks.js';
import { defineRoute } from '../../route.js';

/**
 * Where Daraja POSTs the result of a prompt. No API key: Daraja cannot send one. The path holds
 * the unguessable token issued for that one prompt; an unknown token is a 404 and changes nothing.
 */
export const mpesaCallbackRoute = defineRoute({
  method: 'POST',
  url: '/v1/callbacks/mpesa/:token',
  operationId: 'receiveMpesaCallback',
  summary: 'M-Pesa STK callback (called by Safaricom, not by merchants)',
  tags: ['Callbacks'],
  auth: 'none',
  params: z.object({ token: z.string().regex(/^[0-9a-z]{40}$/) }),
  body: stkCallbackSchema,
  responses: {
    200: {
      description: 'Recorded (duplicates too); the acknowledgement Daraja expects',
      schema: z.object({ ResultCode: z.literal(0), ResultDesc: z.literal('Accepted') }),
    },
  },
  handler: async ({ deps, params, body, request }) => receiveStkCallback({ ...deps, logger: request.log as never }, params.token, body),
});
