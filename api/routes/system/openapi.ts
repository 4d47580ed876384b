import { defineRoute } from '../../route.js';
import { buildOpenApi } from '../../openapi.js';

let cached: unknown;

export const openapi = defineRoute({
  method: 'GET',
  url: '/v1/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This OpenAPI 3.1 document, generated from the route schemas',
  tags: ['System'],
  auth: 'none',
  responses: { 200: { description: 'OpenAPI 3.1 document' } },
  handler: async ({ deps }) => {
    cached ??= buildOpenApi(deps.config.publicBaseUrl);
    return cached;
  },
});
