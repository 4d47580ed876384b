import { en, sw, type MessageKey } from './messages.js';

export const languages = ['en', 'sw'] as const;
export type Lang = (typeof languages)[number];
export const languageNames: Record<Lang, string> = { en: 'English', sw: 'Kiswahili' };
/**
 * The cookie that remembers a customer's explicit choice of language (set only by the switch; no
 * session). It was `malipo_lang` before, which the page's script also set when it merely followed
 * the browser: that one is ignored and cleared (routes.ts), so those browsers are followed again.
 */
export const languageCookie = 'malipo_lang_choice';
export const formerLanguageCookie = 'malipo_lang';

const tables: Record<Lang, Record<MessageKey, string>> = { en, sw };
/** The locale amounts and dates are formatted in: Kenyan English or Kenyan Swahili. */
export const localeOf: Record<Lang, string> = { en: 'en-KE', sw: 'sw-KE' };

const isLang = (v: unknown): v is Lang => typeof v === 'string' && (languages as readonly string[]).includes(v);

/**
 * Which language to render: an explicit `?lang=` (the switch, or a link carrying a switch made
 * earlier), then the remembered switch (the cookie), then the browser's: `?hl=` (what the page's
 * script read from navigator.languages, never remembered), else Accept-Language by its q-values,
 * else English. `chosen` says whether the customer decided (only then is `?lang=` carried along).
 */
export function pickLanguage(
  query: unknown,
  cookie: string | undefined,
  acceptLanguage: string | undefined,
  browserHint?: unknown,
): { lang: Lang; chosen: boolean } {
  if (isLang(query)) return { lang: query, chosen: true };
  if (isLang(cookie)) return { lang: cookie, chosen: true };
  if (isLang(browserHint)) return { lang: browserHint, chosen: false };
  return { lang: fromAcceptLanguage(acceptLanguage ?? ''), chosen: false };
}

export function fromAcceptLanguage(header: string): Lang {
  const ranked = header
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return { base: tag.toLowerCase().split('-')[0]!, q: q === undefined ? 1 : Number(q), i };
    })
    .filter((x) => x.base && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked.map((x) => x.base).find(isLang) ?? 'en';
}

/** A text in a language, with `{name}` placeholders filled in (values are not escaped here). */
export function t(lang: Lang, key: MessageKey, vars: Record<string, string | number> = {}): string {
  return tables[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** "12.5" USDT → "12.5 USDT" with the locale's grouping ("1,250.5 USDT"); never through a float. */
export function formatUsdtAmount(lang: Lang, decimal: string): string {
  const [whole = '0', frac] = decimal.split('.');
  const nf = new Intl.NumberFormat(localeOf[lang]);
  const point = nf.formatToParts(1.5).find((p) => p.type === 'decimal')?.value ?? '.';
  return `${nf.format(BigInt(whole))}${frac ? point + frac : ''} USDT`;
}

export function formatKes(lang: Lang, shillings: number): string {
  return `KES ${new Intl.NumberFormat(localeOf[lang], { maximumFractionDigits: 0 }).format(shillings)}`;
}

/** Dates in Kenyan time on the server render (the script re-formats them in the browser's zone). */
export function formatDateTime(lang: Lang, iso: string): string {
  return new Intl.DateTimeFormat(localeOf[lang], { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'Africa/Nairobi', timeZoneName: 'short' }).format(new Date(iso));
}

/** "5 seconds", "dakika 16": a rough duration in the largest whole unit. */
export function formatDuration(lang: Lang, seconds: number): string {
  const [value, unit] = seconds < 90 ? [Math.max(1, Math.round(seconds)), 'second'] : seconds < 5400 ? [Math.round(seconds / 60), 'minute'] : [Math.round(seconds / 3600), 'hour'];
  return new Intl.NumberFormat(localeOf[lang], { style: 'unit', unit, unitDisplay: 'long' }).format(value);
}

/** The countdown's text: "2:05:09" or "4:59" (the script keeps it ticking). */
export function formatCountdown(msLeft: number): string {
  const s = Math.max(0, Math.floor(msLeft / 1000));
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(sec)}` : `${m}:${two(sec)}`;
}

/** The words for an M-Pesa failure code (services/checkout/progress.ts). */
export function mpesaFailureText(lang: Lang, code: string): string {
  const key = `mpesa_${code}` as MessageKey;
  return key in en ? t(lang, key) : t(lang, 'mpesa_unknown', { code });
}

/** The words for an error of the "send prompt" action, by the API's error code. */
export function promptErrorText(lang: Lang, code: string | undefined, param?: string): string {
  if (code === 'invalid_field' && param === 'phoneNumber') return t(lang, 'err_phone');
  const byCode: Record<string, MessageKey> = {
    phone_prompt_limit: 'err_phone_prompt_limit',
    rate_limited: 'err_rate_limited',
    prompt_in_progress: 'err_prompt_in_progress',
    prompt_limit_reached: 'err_prompt_limit_reached',
    invalid_state: 'err_invalid_state',
    upstream_failed: 'err_upstream_failed',
    rail_not_available: 'err_unavailable',
    credentials_rejected: 'err_unavailable',
    not_found: 'err_invalid_state',
  };
  return t(lang, (code && byCode[code]) || 'err_generic');
}

/** The texts the page's script needs (the rest arrives rendered): kept small on purpose. */
export function clientMessages(lang: Lang): Record<string, string> {
  const keys: MessageKey[] = ['copied', 'sending', 'sendPrompt', 'err_phone', 'err_network', 'err_generic'];
  const errors = ['phone_prompt_limit', 'rate_limited', 'prompt_in_progress', 'prompt_limit_reached', 'invalid_state', 'upstream_failed', 'rail_not_available'];
  return {
    ...Object.fromEntries(keys.map((k) => [k, t(lang, k)])),
    ...Object.fromEntries(errors.map((c) => [`code_${c}`, promptErrorText(lang, c)])),
  };
}
