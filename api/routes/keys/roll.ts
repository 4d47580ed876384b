import { rolledApiKeySchema } from '../../../services/keys/dto.js';
import { defineRoute } from '../../route.js';
import { rollApiKey } from '../../../services/keys/api-keys.js';
import { keyIdParams, rollKeyBody } from './schemas.js';

export const rollApiKeyRoute = defineRoute({
  method: 'POST',
  url: '/v1/keys/:id/roll',
  operationId: 'rollApiKey',
  summary: 'Replace a key with a new one; the old key keeps working for graceHours (default 24), then is refused',
  tags: ['API keys'],
  auth: 'secret',
  // An Idempotency-Key replay answers with the same new key, kept encrypted in the idempotency record.
  idempotency: { sealedFields: ['key'] },
  params: keyIdParams,
  body: rollKeyBody,
  bodyOptional: true,
  responses: { 200: { description: 'The new key (whole only in this answer) and the rolled one', schema: rolledApiKeySchema } },
  handler: async ({ deps, auth, params, body, request }) => {
    const rolled = await rollApiKey(deps, auth, params.id, body.graceHours);
    const { previousKey } = rolled;
    request.log.info({ storeId: auth.storeId, keyId: previousKey.id, replacedBy: rolled.id, expiresAt: previousKey.expiresAt, by: auth.keyId }, 'api key rolled');
    return rolled;
  },
});
