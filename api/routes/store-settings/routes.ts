import { z } from 'zod/v4';
import { getStoreSettings, updateStoreSettings } from '../../../services/stores/settings.js';
import { defineRoute } from '../../route.js';

const params = z.object({ clientId: z.string() });
const policySchema = z
  .object({
    lateWatchMinutes: z.number().int().min(0).max(43_200).describe('How long after expiry late payments are still watched'),
    underpaymentToleranceBps: z.number().int().min(0).max(1_000).describe('Shortfall accepted as paid, in basis points (100 = 1 %)'),
  })
  .meta({ id: 'StorePolicy' });

export const getStoreSettingsRoute = defineRoute({
  method: 'GET',
  url: '/v1/merchant/clients/:clientId/settings',
  operationId: 'getStoreSettings',
  summary: "The store's payment policy in the key's environment",
  tags: ['Merchant'],
  auth: 'secret',
  params,
  responses: { 200: { description: 'Policy', schema: policySchema } },
  handler: async ({ deps, auth, params }) => getStoreSettings(deps, auth, params.clientId),
});

export const updateStoreSettingsRoute = defineRoute({
  method: 'PUT',
  url: '/v1/merchant/clients/:clientId/settings',
  operationId: 'updateStoreSettings',
  summary: 'Change the payment policy for links created from now on',
  tags: ['Merchant'],
  auth: 'secret',
  params,
  body: policySchema.partial().strict(),
  responses: { 200: { description: 'Policy', schema: policySchema } },
  handler: async ({ deps, auth, params, body }) => updateStoreSettings(deps, auth, params.clientId, body),
});
