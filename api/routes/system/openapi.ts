import { defineRoute } from '../../route.js';

export const openapi = defineRoute({
  method: 'GET',
  url: '/v1/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This OpenAPI 3.1 document, generated from the route schemas',
  tags: ['System'],
  auth: 'none',
  responses: { 200: { description: 'OpenAPI 3.1 document' } },
  // @fastify/swagger builds the document once, from the schemas the routes were registered with (api/openapi.ts).
  handler: async ({ request }) => request.server.swagger(),
});
