import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import type { Limit } from '../../api/plugins/rate-limit.js';
import { AppError } from '../../domain/errors.js';
import { checkoutLinkExists } from '../../services/checkout/checkout.js';
import { sendMobileMoneyPrompt } from '../../services/mpesa/prompt.js';
import { promptErrorText, type Lang } from './i18n.js';

/**
 * How customers type their number (0712 345 678, +254 712…, 254712…) to the 254XXXXXXXXX M-Pesa
 * wants; anything else is passed on unchanged for the service to refuse. The page's script does
 * the same before it posts JSON.
 */
export function normalizePhoneInput(input: string): string {
  const digits = input.replace(/[\s\-().]/g, '').replace(/^\+/, '');
  return /^0\d{9}$/.test(digits) ? `254${digits.slice(1)}` : digits;
}

/**
 * A form post from another site is refused: the page is public and has no session to protect,
 * but a hostile page must not make its visitors' browsers ring phones for it (each visitor's IP
 * would bring a fresh rate-limit budget). Browsers say where a POST comes from (Sec-Fetch-Site,
 * and Origin: the page's referrer policy, same-origin, keeps it); a caller that says neither is a
 * script, which could call the JSON route just as well and meets the same limits there.
 */
export function isCrossSiteForm(request: FastifyRequest, publicBaseUrl: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.origin;
  if (!origin) return false;
  return ![new URL(publicBaseUrl).origin, `${request.protocol}://${request.host}`].includes(origin);
}

export type FormOutcome = { ok: true } | { ok: false; status: number; message: string };

/**
 * The no-JavaScript "Send M-Pesa prompt": the same checks, limits and service as
 * POST /v1/checkout/:id/pay/mobile-money, answered in the customer's language.
 */
export async function sendPromptFromForm(
  deps: ApiDeps,
  f: { request: FastifyRequest; reply: FastifyReply; promptLimit: Limit; linkId: string; phone: string; lang: Lang },
): Promise<FormOutcome> {
  if (isCrossSiteForm(f.request, deps.config.publicBaseUrl)) return { ok: false, status: 403, message: promptErrorText(f.lang, 'cross_site') };
  try {
    await f.promptLimit(f.request, f.reply);
    if (!(await checkoutLinkExists(deps, f.linkId))) return { ok: false, status: 404, message: promptErrorText(f.lang, 'not_found') };
    await sendMobileMoneyPrompt(deps, f.linkId, normalizePhoneInput(f.phone), f.request.log);
    return { ok: true };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.headers) f.reply.headers(err.headers);
    return { ok: false, status: err.status, message: promptErrorText(f.lang, err.code, err.param) };
  }
}
