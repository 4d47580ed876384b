import { createdApiKeySchema } from '../../../services/keys/dto.js';
import { defineRoute } from '../../route.js';
import { createApiKey } from '../../../services/keys/api-keys.js';
import { createKeyBody } from './schemas.js';

export const createApiKeyRoute = defineRoute({
  method: 'POST',
  url: '/v1/keys',
  operationId: 'createApiKey',
  summary: "Create a secret or publishable key in the key's environment; a secret key is shown once",
  tags: ['API keys'],
  auth: 'secret',
  // An Idempotency-Key replay answers with the same key, kept encrypted in the idempotency record.
  idempotency: { sealedFields: ['key'] },
  body: createKeyBody,
  bodyOptional: true,
  responses: { 201: { description: 'The new key, whole only in this answer', schema: createdApiKeySchema } },
  handler: async ({ deps, auth, body, reply, request }) => {
    const created = await createApiKey(deps, auth, body);
    request.log.info({ storeId: auth.storeId, environment: auth.environment, keyId: created.id, by: auth.keyId }, 'api key created');
    reply.status(201);
    return created;
  },
});
