import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { menuQr } from '../../services/checkout/menu-qr.js';
import QRCode from 'qrcode';
import type { ApiDeps } from '../../api/deps.js';
import { limitOf } from '../../api/plugins/rate-limit.js';
import { checkoutPayMobileMoneyRoute } from '../../api/routes/checkout/pay-mobile-money.js';
import { findCheckout } from '../../services/checkout/checkout.js';
import { isRailId } from '../../rails/registry.js';
import { formerLanguageCookie, languageCookie, pickLanguage, type Lang } from './i18n.js';
import { renderCheckoutPage, renderCheckoutPanel, renderNotFoundPage, type PageOptions } from './page.js';
import { sendPromptFromForm } from './pay-form.js';
import { registerStoreLogoRoute } from './logo.js';
import { paidByPrompt } from '../../rails/methods.js';

const linkId = /^pl_[0-9a-z]{24}$/;
/** Page views, panel refreshes and QR codes per IP per minute (many customers share a carrier's IP). */
export const checkoutPageRequestsPerMinute = 300;

const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // Same-origin: the link's id never leaves in a Referer, and the M-Pesa form's Origin is sent (pay-form.ts).
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

const cookieValue = (request: FastifyRequest, name: string): string | undefined =>
  request.headers.cookie?.split(';').map((c) => c.trim().split('=')).find(([k]) => k === name)?.[1];

/**
 * The page's language. Only an explicit `?lang=` (the switch) is remembered, in a cookie for a
 * year; the browser's language (Accept-Language, or the script's `?hl=` from navigator.languages)
 * is followed on every visit and never stored. The former cookie, which the script also set when it
 * only followed the browser, is cleared.
 */
export function languageFor(request: FastifyRequest, reply: FastifyReply, asked?: unknown): { lang: Lang; chosen: boolean } {
  const params = request.query as Record<string, unknown>;
  const query = asked ?? params.lang;
  const picked = pickLanguage(query, cookieValue(request, languageCookie), request.headers['accept-language'], params.hl);
  const cookies: string[] = [];
  if (picked.chosen && query === picked.lang) cookies.push(`${languageCookie}=${picked.lang}; Path=/p; Max-Age=31536000; SameSite=Lax`);
  if (cookieValue(request, formerLanguageCookie) !== undefined) cookies.push(`${formerLanguageCookie}=; Path=/p; Max-Age=0; SameSite=Lax`);
  if (cookies.length) reply.header('set-cookie', cookies);
  return picked;
}

/**
 * The hosted checkout: `/p/<id>` renders the whole page on the server, so it works with
 * JavaScript off; the page's script polls GET /v1/checkout/:id and, when it changes, swaps in
 * `/p/<id>/panel`. The M-Pesa form posts to `/p/<id>/pay/mobile-money` (pay-form.ts). QR codes
 * are SVGs made here from the rail's payment URI.
 */
export function registerCheckoutPages(app: FastifyInstance, deps: ApiDeps): void {
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4 * 1024 }, (_req, body, done) => {
      done(null, new URLSearchParams(body as string));
    });
    const pageLimit = limitOf(scope, 'checkoutPage', checkoutPageRequestsPerMinute);
    // The form spends the JSON route's budget: one count per IP, whichever way the prompt is asked for.
    const promptLimit = limitOf(scope, checkoutPayMobileMoneyRoute.operationId, checkoutPayMobileMoneyRoute.rateLimitPerMinute!);

    const load = async (request: FastifyRequest) => {
      const { id } = request.params as { id: string };
      return linkId.test(id) ? findCheckout(deps, id) : null;
    };

    scope.get('/p/:id', { onRequest: pageLimit }, async (request, reply) => {
      reply.headers(pageHeaders);
      const found = await load(request);
      const { lang, chosen } = languageFor(request, reply);
      if (!found) return reply.status(404).send(renderNotFoundPage(lang));
      const rail = (request.query as Record<string, unknown>).rail;
      return renderCheckoutPage(found, { lang, chosen, rail: typeof rail === 'string' ? rail : undefined });
    });

    scope.get('/p/:id/panel', { onRequest: pageLimit }, async (request, reply) => {
      reply.headers(pageHeaders);
      const found = await load(request);
      const { lang, chosen } = languageFor(request, reply);
      // The page's script ignores a panel it cannot have; a person who opens the URL reads why.
      if (!found) return reply.status(404).send(renderNotFoundPage(lang));
      const rail = (request.query as Record<string, unknown>).rail;
      return renderCheckoutPanel(found, { lang, chosen, rail: typeof rail === 'string' ? rail : undefined });
    });

    scope.post('/p/:id/pay/mobile-money', async (request, reply) => {
      reply.headers(pageHeaders);
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const { lang, chosen } = languageFor(request, reply, form.get('lang'));
      const { id } = request.params as { id: string };
      const outcome = await sendPromptFromForm(deps, { request, reply, promptLimit, linkId: id, phone: form.get('phoneNumber') ?? '', lang });
      if (outcome.ok) return reply.redirect(`/p/${id}?rail=MOBILE_MONEY${chosen ? `&lang=${lang}` : ''}`, 303);
      const found = linkId.test(id) ? await findCheckout(deps, id) : null;
      if (!found) return reply.status(404).send(renderNotFoundPage(lang));
      const options: PageOptions = { lang, chosen, rail: found.rails.find((r) => paidByPrompt(r.network))?.network, echo: { phone: form.get('phoneNumber') ?? '', error: outcome.message } };
      return reply.status(outcome.status).send(renderCheckoutPage(found, options));
    });

    registerStoreLogoRoute(scope, deps, pageLimit);

    // The Dynamic QR of the "pay from the M-Pesa menu" block (services/checkout/menu-qr.ts).
    scope.get('/p/:id/mpesa-qr.png', { onRequest: pageLimit }, async (request, reply) => {
      const qr = await menuQr(deps, (request.params as { id: string }).id);
      if ('none' in qr) return reply.callNotFound();
      if ('unavailable' in qr) {
        request.log.warn({ reason: qr.unavailable }, 'Daraja could not draw the Dynamic QR; the page keeps the typed instructions');
        return reply.status(503).header('retry-after', '30').header('cache-control', 'no-store').send();
      }
      // Private: the image names the link's account number; it changes only with the amount (in the URL).
      return reply.header('content-type', 'image/png').header('cache-control', 'private, max-age=300').send(qr.png);
    });

    scope.get('/p/:id/qr/:file', { onRequest: pageLimit }, async (request, reply) => {
      const { file } = request.params as { file: string };
      const rail = file.replace(/\.svg$/, '');
      const found = isRailId(rail) ? await load(request) : null;
      const entry = found?.rails.find((r) => r.network === rail);
      if (!entry?.payUri) return reply.callNotFound();
      const svg = await QRCode.toString(entry.payUri, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
      return reply.header('content-type', 'image/svg+xml').header('cache-control', 'public, max-age=3600').send(svg);
    });
  });
}
