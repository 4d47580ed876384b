import { z } from 'zod/v4';
import { notFound } from '../../../domain/errors.js';
import { shortcodePattern, shortcodeTypes } from '../../../rails/mpesa/merchant.js';
import { connectMobileMoney } from '../../../services/mpesa/connect.js';
import { defineRoute } from '../../route.js';

// Pasted credentials often carry stray spaces or newlines; Daraja's never contain any.
const credential = (what: string) => z.string().trim().min(1, `${what} must not be empty`).max(200);
const shortcode = z.string().trim().regex(shortcodePattern, 'expected 5 to 7 digits');

export const connectMobileMoneyRoute = defineRoute({
  method: 'POST',
  url: '/v1/merchant/clients/:clientId/mobile-money/connect',
  operationId: 'connectMobileMoney',
  summary: 'Connect (or replace) the M-Pesa paybill or till; the credentials are validated with Daraja before they are saved',
  tags: ['Mobile money'],
  auth: 'secret',
  // Each request calls the operator twice.
  rateLimitPerMinute: 20,
  params: z.object({ clientId: z.string() }),
  body: z.strictObject({
    consumerKey: credential('consumerKey').describe('Consumer key of the Daraja app'),
    consumerSecret: credential('consumerSecret').describe('Consumer secret of the Daraja app'),
    shortcode: shortcode.describe('Paybill number, or the till number for a till'),
    passkey: credential('passkey').describe('Lipa na M-Pesa Online (M-Pesa Express) passkey'),
    environment: z.enum(['sandbox', 'live']).describe("'sandbox' with a test key, 'live' with a live key"),
    shortcodeType: z.enum(shortcodeTypes).optional().describe("'paybill' (default) or 'till' (Buy Goods)"),
    storeNumber: shortcode.optional().describe('For a till: the store / head-office number (BusinessShortCode)'),
    c2bSettlesAlone: z
      .boolean()
      .optional()
      .describe('Paybill/till payments from the M-Pesa menu: whether a confirmation Daraja posts to the secret URL settles a link by itself (default true; see docs/mobile-money.md, "Trust policy")'),
    c2bUnallocatedAllowed: z
      .boolean()
      .optional()
      .describe('Whether validation accepts a paybill payment whose account number matches no open link (kept as unallocated). Default false: M-Pesa refuses it and the customer keeps the money'),
    c2bPullNominatedNumber: z
      .string()
      .regex(/^2547\d{8}$|^2541\d{8}$/)
      .optional()
      .describe('Registers the shortcode for Pull Transactions with this nominated Safaricom number (2547XXXXXXXX) of the business: payments whose confirmation never arrived are then found by a scheduled pull, and confirmations wait for it where c2bSettlesAlone is false (docs/mobile-money.md, "Backfill")'),
  }),
  responses: {
    200: {
      description: 'Connected; the credentials are stored encrypted and never returned',
      schema: z.object({
        ok: z.literal(true),
        shortcode: z.string(),
        environment: z.enum(['sandbox', 'live']),
        c2bRegistration: z
          .object({
            registered: z.boolean(),
            apiVersion: z.enum(['v2', 'v1']).nullable(),
            error: z
              .object({ type: z.literal('upstream_error'), code: z.literal('c2b_registration_failed'), message: z.string(), param: z.literal('shortcode') })
              .nullable(),
          })
          .describe('Registration of the confirmation and validation URLs with Daraja (C2B Register URL). A refusal does not undo the connection: prompts work; paybill payments from the menu are not matched until a connect registers them'),
        pullRegistration: z
          .object({ registered: z.boolean(), error: z.string().nullable() })
          .nullable()
          .describe('Registration for Pull Transactions, when c2bPullNominatedNumber was given (null otherwise). A refusal does not undo the connection'),
      }),
    },
  },
  handler: async ({ deps, auth, params, body }) => {
    if (params.clientId !== auth.storeId) throw notFound('client');
    return connectMobileMoney(deps, auth, body);
  },
});
