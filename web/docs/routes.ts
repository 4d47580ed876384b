import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { buildOpenApi } from '../../api/openapi.js';
import { renderApiReference } from './page.js';

/** `GET /docs`: the API reference for people, drawn from the same OpenAPI document as /v1/openapi.json. */
export function registerDocsPage(app: FastifyInstance, deps: ApiDeps): void {
  let html: string | undefined;
  app.get('/docs', async (_request, reply) => {
    html ??= renderApiReference(buildOpenApi(deps.config.publicBaseUrl) as never);
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'self'; img-src 'self'")
      .send(html);
  });
}
