import { z } from 'zod/v4';
import { defaultRedirectProblem } from '../../../domain/redirect-url.js';
import { getStoreSettings, updateStoreSettings, type StoreSettings } from '../../../services/stores/settings.js';
import { createPaymentLinkRoute } from '../payment-links/create.js';
import { defineRoute } from '../../route.js';
import type { Same } from '../../schema-types.js';

const params = z.object({ clientId: z.string() });

const policyFields = {
  lateWatchMinutes: z.number().int().min(0).max(43_200).describe('How long after expiry late payments are still watched'),
  underpaymentToleranceBps: z.number().int().min(0).max(1_000).describe('Shortfall accepted as paid, in basis points (100 = 1 %)'),
};

/**
 * The link's own `redirectUrl` rule (an http(s) URL of at most 2,000 characters), plus what a
 * default sent to every customer needs: https on a public host (domain/redirect-url.ts).
 */
export const defaultRedirectUrlSchema = createPaymentLinkRoute.body!.shape.redirectUrl.unwrap().superRefine((url, ctx) => {
  const problem = defaultRedirectProblem(url);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const storeNameSchema = z.string().trim().min(1, 'must not be empty').max(200);

const settingsSchema = z
  .object({
    ...policyFields,
    defaultRedirectUrl: z.string().nullable().describe('Where the checkout sends customers back for links created without redirectUrl; null for none'),
    storeName: z.string().describe('The name customers see on the checkout'),
    logoUrl: z.string().nullable().describe('The checkout logo, served from this server under its content hash (upload it in the dashboard); null without one'),
  })
  .meta({ id: 'StoreSettings' });

export const updateStoreSettingsBody = z.strictObject({
  ...policyFields,
  defaultRedirectUrl: defaultRedirectUrlSchema
    .nullable()
    .describe('https on a public host, used by links created without redirectUrl from now on (this environment); null clears it')
    .meta({ example: 'https://shop.example.com/thanks' }),
  storeName: storeNameSchema.describe('The store name shown on the checkout (every environment)'),
}).partial();

export const getStoreSettingsRoute = defineRoute({
  method: 'GET',
  url: '/v1/merchant/clients/:clientId/settings',
  operationId: 'getStoreSettings',
  summary: "The store's settings: payment policy and default redirect URL in the key's environment, name and logo",
  tags: ['Merchant'],
  auth: 'secret',
  params,
  responses: { 200: { description: 'Settings', schema: settingsSchema } },
  handler: async ({ deps, auth, params }) => getStoreSettings(deps, auth, params.clientId),
});

export const updateStoreSettingsRoute = defineRoute({
  method: 'PUT',
  url: '/v1/merchant/clients/:clientId/settings',
  operationId: 'updateStoreSettings',
  summary: 'Change the payment policy, default redirect URL or name, for links created from now on',
  tags: ['Merchant'],
  auth: 'secret',
  params,
  body: updateStoreSettingsBody,
  responses: { 200: { description: 'Settings', schema: settingsSchema } },
  handler: async ({ deps, auth, params, body }) => updateStoreSettings(deps, auth, params.clientId, body),
});

// The schema describes exactly what the service returns.
true satisfies Same<z.infer<typeof settingsSchema>, StoreSettings>;
