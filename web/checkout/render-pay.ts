import type { CheckoutRail, CheckoutView } from '../../services/checkout/view.js';
import { esc } from './html.js';
import { formatDuration, formatKes, formatUsdtAmount, t, type Lang } from './i18n.js';
import { methodOf } from '../../rails/methods.js';
import { railFacts } from '../../rails/registry.js';

/** What an M-Pesa form shows again after a refused no-JS post: the number typed and why. */
export interface FormEcho {
  phone: string;
  error: string;
}

/**
 * The rail choices: links, so they work without JavaScript (`?rail=`); the script keeps them in
 * place. Each shows its own price, so the customer compares before choosing: KES for a prompt
 * (M-Pesa), the USDT amount due for a chain (whose name and token standard are beside it).
 */
export function renderRailChoices(v: CheckoutView, lang: Lang, selected: CheckoutRail | null, chosen = false): string {
  const items = v.rails.map((r) => {
    const current = selected?.network === r.network;
    const href = `?rail=${r.network}${langParam(lang, chosen)}`;
    const price = railPrice(v, lang, r);
    return `<li><a class="rail" href="${esc(href)}" data-rail="${r.network}"${current ? ' aria-current="true"' : ''}>
<img src="${esc(r.chainLogoUrl)}" alt="" width="24" height="24"><span>${esc(r.displayName)}<small>${esc(r.tokenStandard ?? t(lang, 'mpesaPrompt'))}</small>${price ? `<b class="price" data-testid="price-${r.network}">${esc(price)}</b>` : ''}</span></a></li>`;
  });
  return `<nav aria-label="${esc(t(lang, 'methodGroup'))}"><ul class="rails">${items.join('')}</ul></nav>`;
}

/** What a rail asks for: the KES amount on a prompt rail (none when the link has no KES price), else the USDT due. */
export function railPrice(v: CheckoutView, lang: Lang, rail: CheckoutRail): string | null {
  if (methodOf(rail.network).checkout.panel === 'prompt') return v.mobileMoneyAmount === null ? null : formatKes(lang, v.mobileMoneyAmount);
  return formatUsdtAmount(lang, v.amountDue);
}

/** A switch the customer made is carried in links (it also lives in a cookie, which may be off); the browser's language is not. */
const langParam = (lang: Lang, chosen: boolean) => (chosen ? `&lang=${lang}` : '');

export function renderRailPanel(v: CheckoutView, lang: Lang, rail: CheckoutRail | null, echo?: FormEcho, chosen = false): string {
  if (!rail) return `<p class="muted">${esc(t(lang, 'chooseMethod'))}</p>`;
  if (methodOf(rail.network).checkout.panel === 'prompt') return mpesaPanel(v, lang, echo, chosen);
  if (rail.simulatedOnly) {
    return `<section class="pay"><p class="notice" data-testid="simulated-only">${esc(t(lang, 'simulatedOnly', { network: rail.displayName }))}</p></section>`;
  }
  return usdtPanel(v, lang, rail);
}

function usdtPanel(v: CheckoutView, lang: Lang, rail: CheckoutRail): string {
  const amount = formatUsdtAmount(lang, v.amountDue);
  const network = rail.displayName;
  const hint = t(lang, methodOf(rail.network).checkout.hint ?? 'evmHint', { network });
  const copy = (value: string, label: string) =>
    `<button class="copy" type="button" data-copy="${esc(value)}" hidden>${esc(label)}</button>`;
  return `<section class="pay" aria-labelledby="pay-title" data-testid="pay-${rail.network}">
<h2 id="pay-title" class="pay-title">${esc(t(lang, 'sendExactly', { amount, network, standard: rail.tokenStandard ?? '' }))}</h2>
<p class="warn">${esc(t(lang, 'onlyThisNetwork', { network, native: railFacts[rail.network].nativeCoin ?? '' }))}</p>
${rail.qrUrl && rail.payUri ? `<img class="qr" src="${esc(rail.qrUrl)}" alt="${esc(t(lang, 'qrAlt', { uri: rail.payUri }))}" width="220" height="220" data-testid="qr">` : ''}
<dl class="facts">
<div><dt>${esc(t(lang, 'networkLabel'))}</dt><dd>${esc(network)} (${esc(rail.tokenStandard ?? '')})</dd></div>
<div><dt>${esc(t(lang, 'amountLabel'))}</dt><dd><code data-testid="pay-amount">${esc(v.amountDue)}</code> USDT ${copy(v.amountDue, t(lang, 'copyAmount'))}</dd></div>
<div><dt>${esc(t(lang, 'addressLabel'))}</dt><dd><code data-testid="address">${esc(rail.address ?? '')}</code> ${copy(rail.address ?? '', t(lang, 'copyAddress'))}</dd></div>
</dl>
${rail.walletUri ? `<a class="primary" href="${esc(rail.walletUri)}" data-testid="open-wallet">${esc(t(lang, 'openWallet'))}</a>` : ''}
<p class="muted">${esc(hint)}</p>
<p class="muted">${esc(t(lang, 'feeAndTime', { fee: rail.estimatedFeeUsd ?? '', time: formatDuration(lang, rail.estimatedConfirmationSeconds) }))}</p>
</section>`;
}

/**
 * The M-Pesa form posts without JavaScript (POST /p/:id/pay/mobile-money, then back to the page);
 * with it, the script sends the same number to the JSON route. A prompt already open hides it.
 */
function mpesaPanel(v: CheckoutView, lang: Lang, echo: FormEcho | undefined, chosen: boolean): string {
  if (v.mobileMoney?.state === 'waiting') return '';
  const error = echo?.error ?? '';
  return `<section class="pay" aria-label="M-Pesa">
<form method="post" action="/p/${esc(v.id)}/pay/mobile-money" data-mpesa novalidate>
${chosen ? `<input type="hidden" name="lang" value="${lang}">\n` : ''}<label for="phone">${esc(t(lang, 'phoneLabel'))}</label>
<input type="tel" id="phone" name="phoneNumber" inputmode="tel" autocomplete="tel" placeholder="07XX XXX XXX" aria-describedby="phone-hint phone-error"${error ? ' aria-invalid="true"' : ''} value="${esc(echo?.phone ?? '')}">
<p id="phone-hint" class="muted">${esc(t(lang, 'phoneHint'))}</p>
<p id="phone-error" class="error" role="alert">${esc(error)}</p>
<button class="primary" type="submit">${esc(t(lang, 'sendPrompt'))}</button>
<p class="muted">${esc(t(lang, v.mobileMoneyShortcodeType === 'till' ? 'till' : 'paybill', { shortcode: v.mobileMoneyShortcode ?? '' }))}</p>
</form>
${menuPayment(v, lang)}</section>`;
}

/**
 * No prompt (a phone off, out of coverage, a SIM toolkit that misbehaves)? The customer pays from
 * the M-Pesa menu: a paybill with the link's account number, which matches the payment to the
 * link; a till (Buy Goods) with no account number at all, matched by the amount only, which the
 * block says plainly so the customer pays exactly what is due.
 */
function menuPayment(v: CheckoutView, lang: Lang): string {
  const m = v.mobileMoneyMenu;
  if (!m) return '';
  const copy = (value: string, label: string) => `<button class="copy" type="button" data-copy="${esc(value)}" hidden>${esc(label)}</button>`;
  const till = m.kind === 'till';
  const number = till
    ? `<div><dt>${esc(t(lang, 'menuTillNumber'))}</dt><dd><code data-testid="menu-till">${esc(m.shortcode)}</code> ${copy(m.shortcode, t(lang, 'copyTillNumber'))}</dd></div>`
    : `<div><dt>${esc(t(lang, 'menuBusinessNumber'))}</dt><dd><code data-testid="menu-paybill">${esc(m.shortcode)}</code> ${copy(m.shortcode, t(lang, 'copyBusinessNumber'))}</dd></div>
<div><dt>${esc(t(lang, 'menuAccountNumber'))}</dt><dd><code data-testid="menu-account">${esc(m.accountRef)}</code> ${copy(m.accountRef, t(lang, 'copyAccountNumber'))}</dd></div>`;
  return `<div class="menu-pay" data-testid="menu-pay">
<h3>${esc(t(lang, 'menuTitle'))}</h3>
<img class="qr" src="/p/${esc(v.id)}/mpesa-qr.png?amount=${m.amountDue}" alt="${esc(t(lang, till ? 'menuTillQrAlt' : 'menuQrAlt'))}" width="220" height="220" data-testid="mpesa-qr">
<p class="muted">${esc(t(lang, till ? 'menuTillSteps' : 'menuSteps'))}</p>
<dl class="facts">
${number}
<div><dt>${esc(t(lang, 'amountLabel'))}</dt><dd><code data-testid="menu-amount">${esc(formatKes(lang, m.amountDue))}</code></dd></div>
</dl>
<p class="muted" data-testid="menu-hint">${esc(t(lang, till ? 'menuTillHint' : 'menuHint'))}</p>
</div>
`;
}
