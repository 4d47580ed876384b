import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ApiDeps } from '../../api/deps.js';
import { assetUrl } from '../../api/plugins/static.js';

const redocPackage = createRequire(import.meta.url).resolve('redoc/package.json');
const redocVersion = (createRequire(import.meta.url)('redoc/package.json') as { version: string }).version;
const redocBundle = `/docs/redoc/${redocVersion}/redoc.standalone.js`;

/**
 * Redoc draws the page in the browser: styles it injects, and search in a worker it makes from a
 * blob. Everything else, images and fonts included, may come only from this app, so the page never
 * makes a request to another host (Redoc's "powered by" logo from its CDN is simply not loaded).
 */
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; worker-src blob:; connect-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

function referencePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Malipo API reference</title>
<link rel="stylesheet" href="${assetUrl('docs/docs.css')}">
</head>
<body>
<div id="reference" data-spec-url="/v1/openapi.json"><noscript>The reference needs JavaScript. The document itself is at <a href="/v1/openapi.json">/v1/openapi.json</a>.</noscript></div>
<script src="${redocBundle}"></script>
<script src="${assetUrl('docs/docs.js')}"></script>
</body>
</html>`;
}

/**
 * `GET /docs`: the API reference for people, drawn by Redoc (its standalone bundle, served from
 * node_modules under /docs/redoc/<version>/) from the same document as /v1/openapi.json.
 */
export function registerDocsPage(app: FastifyInstance, _deps: ApiDeps): void {
  void app.register(fastifyStatic, {
    root: join(dirname(redocPackage), 'bundles'),
    prefix: `/docs/redoc/${redocVersion}/`,
    decorateReply: false,
    wildcard: false,
    index: false,
    allowedPath: (path) => path === '/redoc.standalone.js',
    maxAge: '365d',
    immutable: true,
  });
  const html = referencePage();
  app.get('/docs', async (_request, reply) =>
    reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', contentSecurityPolicy).send(html),
  );
}
