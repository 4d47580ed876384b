import type { CheckoutRail, CheckoutView } from '../../services/checkout/view.js';
import { assetUrl } from '../../api/plugins/static.js';
import { esc, inlineJson } from './html.js';
import { clientMessages, formatCountdown, formatDateTime, formatKes, formatUsdtAmount, languageNames, languages, t, type Lang } from './i18n.js';
import { renderRailChoices, renderRailPanel, type FormEcho } from './render-pay.js';
import { checkoutState, isFinal, renderState, stateTitle, type CheckoutState } from './render-state.js';
import { paidByPrompt } from '../../rails/methods.js';

export interface PageOptions {
  lang: Lang;
  /** Whether the customer chose the language (switch or cookie) rather than the browser's header. */
  chosen: boolean;
  /** The `?rail=` asked for (a rail choice without JavaScript). */
  rail?: string;
  echo?: FormEcho;
}

function layout(lang: Lang, title: string, body: string, switchQuery = ''): string {
  const links = languages
    .map((l) => `<a href="?lang=${l}${esc(switchQuery)}" lang="${l}" hreflang="${l}"${l === lang ? ' aria-current="true"' : ''}>${languageNames[l]}</a>`)
    .join(' ');
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="stylesheet" href="${assetUrl('checkout/checkout.css')}">
</head>
<body>
<nav class="lang" aria-label="${esc(t(lang, 'languageLabel'))}">${links}</nav>
${body}
<footer class="foot">${esc(t(lang, 'footer'))}</footer>
</body>
</html>`;
}

/** The rail shown: the one asked for, the only one, or the one a payment in flight is on. */
export function selectedRail(v: CheckoutView, asked: string | undefined, state: CheckoutState): CheckoutRail | null {
  const find = (id: string | null | undefined) => (id ? (v.rails.find((r) => r.network === id) ?? null) : null);
  return (
    find(asked) ??
    (v.rails.length === 1 ? v.rails[0]! : null) ??
    (state === 'mpesa-waiting' || state === 'mpesa-failed' ? (v.rails.find((r) => paidByPrompt(r.network)) ?? null) : null) ??
    find(v.deposit?.rail)
  );
}

/**
 * The inside of <main>: everything the customer sees, for the link's state. The server is the only
 * renderer; the page's script asks for this part again (GET /p/:id/panel) when the state changes.
 */
export function renderCheckoutPanel(v: CheckoutView, o: PageOptions): string {
  const { lang } = o;
  const state = checkoutState(v);
  const rail = selectedRail(v, o.rail, state);
  const byMpesa = paidByPrompt((v.status === 'CONFIRMED' ? v.confirmedRail : rail?.network) ?? '');
  const amount = byMpesa ? formatKes(lang, v.mobileMoneyAmount ?? 0) : formatUsdtAmount(lang, v.status === 'CONFIRMED' ? v.usdtAmount : v.amountDue);
  const open = !isFinal(state);
  const inFlight = state === 'seen' || state === 'mpesa-waiting';
  const expiresMs = Date.parse(v.expiresAt);
  return [
    `<div class="head">`,
    v.environment === 'test' ? `<p class="badge">${esc(t(lang, 'testMode'))}</p>` : '',
    // The logo is decorative next to the store's name (alt=""), and comes from our own origin.
    v.storeLogoUrl ? `<img class="store-logo" src="${esc(v.storeLogoUrl)}" alt="" data-testid="store-logo">` : '',
    `<h1>${esc(t(lang, 'pageTitle', { store: v.storeName }))}</h1>`,
    v.description ? `<p class="muted">${esc(v.description)}</p>` : '',
    `<p class="amount"><span class="sr-only">${esc(t(lang, 'amountToPay'))}: </span><span data-testid="amount">${esc(amount)}</span></p>`,
    open
      ? `<p class="muted"><span role="timer" data-countdown="${expiresMs}" data-label="${esc(t(lang, 'timeLeft', { time: '{time}' }))}">${esc(t(lang, 'timeLeft', { time: formatCountdown(expiresMs - Date.now()) }))}</span><br>${esc(t(lang, 'payBy', { date: '' }))}<time datetime="${esc(v.expiresAt)}">${esc(formatDateTime(lang, v.expiresAt))}</time></p>`
      : '',
    `</div>`,
    renderState(v, lang, state),
    open && !inFlight ? renderRailChoices(v, lang, rail, o.chosen) + renderRailPanel(v, lang, rail, o.echo, o.chosen) : '',
  ]
    .filter(Boolean)
    .join('\n');
}

export function renderCheckoutPage(v: CheckoutView, o: PageOptions): string {
  const state = checkoutState(v);
  const rail = selectedRail(v, o.rail, state);
  const config = { id: v.id, lang: o.lang, chosen: o.chosen, rail: rail?.network ?? null, state, title: stateTitle(o.lang, state), messages: clientMessages(o.lang) };
  return layout(
    o.lang,
    t(o.lang, 'pageTitle', { store: v.storeName }),
    `<main class="card" id="checkout" data-state="${state}">
${renderCheckoutPanel(v, o)}
</main>
<div id="announce" class="sr-only" role="status" aria-live="polite"></div>
<script type="application/json" id="checkout-config">${inlineJson(config)}</script>
<script src="${assetUrl('checkout/checkout.js')}" defer></script>`,
    rail ? `&rail=${rail.network}` : '',
  );
}

export function renderNotFoundPage(lang: Lang): string {
  return layout(lang, t(lang, 'notFoundTitle'), `<main class="card"><h1>${esc(t(lang, 'notFoundTitle'))}</h1><p class="muted">${esc(t(lang, 'notFoundBody'))}</p></main>`);
}
