import { apiKeySchema } from '../../../services/keys/dto.js';
import { defineRoute } from '../../route.js';
import { revokeApiKey } from '../../../services/keys/api-keys.js';
import { keyIdParams, revokeKeyBody } from './schemas.js';

export const revokeApiKeyRoute = defineRoute({
  method: 'POST',
  url: '/v1/keys/:id/revoke',
  operationId: 'revokeApiKey',
  summary: 'Revoke a key now: it is refused from the next request on and its dashboard sessions end (the calling key needs confirmSelfRevoke)',
  tags: ['API keys'],
  auth: 'secret',
  params: keyIdParams,
  body: revokeKeyBody,
  bodyOptional: true,
  responses: { 200: { description: 'The revoked key', schema: apiKeySchema } },
  handler: async ({ deps, auth, params, body, request }) => {
    const revoked = await revokeApiKey(deps, auth, params.id, { callingKeyId: auth.keyId, confirmSelfRevoke: body.confirmSelfRevoke });
    request.log.info({ storeId: auth.storeId, keyId: revoked.id, by: auth.keyId }, 'api key revoked');
    return revoked;
  },
});
