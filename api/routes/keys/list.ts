import { z } from 'zod/v4';
import { apiKeySchema } from '../../../services/keys/dto.js';
import { defineRoute } from '../../route.js';
import { listApiKeys } from '../../../services/keys/api-keys.js';

export const listApiKeysRoute = defineRoute({
  method: 'GET',
  url: '/v1/keys',
  operationId: 'listApiKeys',
  summary: "The store's API keys in the key's environment, newest first: working keys and those that ended in the last 30 days (never a secret)",
  tags: ['API keys'],
  auth: 'secret',
  responses: { 200: { description: 'Keys, by prefix and last four characters', schema: z.object({ data: z.array(apiKeySchema) }) } },
  handler: async ({ deps, auth }) => listApiKeys(deps, auth),
});
