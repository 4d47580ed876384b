import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { findPublicLogo } from '../../services/stores/logo.js';

/**
 * A store's checkout logo, `/branding/logos/<sha256>.<png|jpg|webp>`: served from our own origin
 * (the checkout's CSP loads images from nowhere else) under a name that changes with the bytes,
 * so it is cached for a year. The type is the one the bytes were recognised as at upload, never
 * sniffed by the browser, and the answer may not run anything even if opened directly.
 */
export function registerStoreLogoRoute(scope: FastifyInstance, deps: ApiDeps, limit: onRequestHookHandler): void {
  scope.get('/branding/logos/:file', { onRequest: limit }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const logo = await findPublicLogo(deps, file);
    if (!logo) return reply.callNotFound();
    return reply
      .headers({
        'content-type': logo.contentType,
        'cache-control': 'public, max-age=31536000, immutable',
        etag: `"${logo.sha256}"`,
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
        'cross-origin-resource-policy': 'same-site',
      })
      .send(logo.bytes);
  });
}
