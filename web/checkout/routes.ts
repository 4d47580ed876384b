import type { FastifyInstance } from 'fastify';
import QRCode from 'qrcode';
import type { ApiDeps } from '../../api/deps.js';
import { findCheckout } from '../../services/checkout/checkout.js';
import { isRailId } from '../../domain/rails.js';
import { renderCheckoutPage, renderNotFoundPage } from './page.js';

const linkId = /^pl_[0-9a-z]{24}$/;

/**
 * The hosted checkout: `/p/<id>` renders the page with its first state inline (no flash of an
 * empty page); the page then polls GET /v1/checkout/:id. QR codes are SVGs made here.
 */
export function registerCheckoutPages(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/p/:id', async (request, reply) => {
    const { id } = request.params as { id: string };
    const found = linkId.test(id) ? await findCheckout(deps, id) : null;
    reply.header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store');
    reply.header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'");
    if (!found) return reply.status(404).send(renderNotFoundPage());
    return renderCheckoutPage(found);
  });

  app.get('/p/:id/qr/:file', async (request, reply) => {
    const { id, file } = request.params as { id: string; file: string };
    const rail = file.replace(/\.svg$/, '');
    const found = linkId.test(id) && isRailId(rail) ? await findCheckout(deps, id) : null;
    const entry = found?.rails.find((r) => r.network === rail);
    if (!entry?.payUri) return reply.callNotFound();
    const svg = await QRCode.toString(entry.payUri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    return reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=3600').send(svg);
  });
}
