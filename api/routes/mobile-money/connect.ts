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
  }),
  responses: {
    200: {
      description: 'Connected; the credentials are stored encrypted and never returned',
      schema: z.object({ ok: z.literal(true), shortcode: z.string(), environment: z.enum(['sandbox', 'live']) }),
    },
  },
  handler: async ({ deps, auth, params, body }) => {
    if (params.clientId !== auth.storeId) throw notFound('client');
    return connectMobileMoney(deps, auth, body);
  },
});
