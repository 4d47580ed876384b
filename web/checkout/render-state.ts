import type { CheckoutView } from '../../services/checkout/view.js';
import { isRailId, railFacts } from '../../rails/registry.js';
import { esc, isWebUrl } from './html.js';
import { formatDateTime, formatDuration, formatKes, formatUsdtAmount, mpesaFailureText, t, type Lang } from './i18n.js';
import { paidByPrompt } from '../../rails/methods.js';

/** Every state the page tells apart (docs/checkout.md, "What the customer sees"). */
export type CheckoutState =
  | 'waiting'
  | 'mpesa-waiting'
  | 'mpesa-failed'
  | 'seen'
  | 'underpaid'
  | 'confirmed'
  | 'expired'
  | 'cancelled';

export function checkoutState(v: CheckoutView): CheckoutState {
  if (v.status === 'CONFIRMED') return 'confirmed';
  if (v.status === 'EXPIRED') return 'expired';
  if (v.status === 'CANCELLED') return 'cancelled';
  if (v.mobileMoney?.state === 'waiting') return 'mpesa-waiting';
  if (v.deposit) return 'seen';
  if (v.amountReceived !== '0') return 'underpaid';
  if (v.mobileMoney?.state === 'failed') return 'mpesa-failed';
  return 'waiting';
}

export const isFinal = (s: CheckoutState): boolean => s === 'confirmed' || s === 'expired' || s === 'cancelled';

const railName = (rail: string | null): string => (rail && isRailId(rail) ? railFacts[rail].displayName : (rail ?? ''));

/** The state's title: also what the live region announces when the state changes. */
export function stateTitle(lang: Lang, s: CheckoutState): string {
  const key = ({
    waiting: 'waitingTitle',
    'mpesa-waiting': 'checkPhoneTitle',
    'mpesa-failed': 'mpesaFailedTitle',
    seen: 'seenTitle',
    underpaid: 'underpaidTitle',
    confirmed: 'confirmedTitle',
    expired: 'expiredTitle',
    cancelled: 'cancelledTitle',
  } as const)[s];
  return t(lang, key);
}

/** The state section: a heading and what to do now. */
export function renderState(v: CheckoutView, lang: Lang, s: CheckoutState): string {
  const p = (text: string, cls = '') => `<p${cls ? ` class="${cls}"` : ''}>${esc(text)}</p>`;
  const usdt = (amount: string) => formatUsdtAmount(lang, amount);
  const kes = formatKes(lang, v.mobileMoneyAmount ?? 0);
  let body = '';
  if (s === 'waiting') return '';
  if (s === 'mpesa-waiting') {
    const ending = v.mobileMoney?.phoneEnding;
    body = p(ending ? t(lang, 'checkPhoneBody', { ending, amount: kes }) : t(lang, 'checkPhoneBodyNoPhone', { amount: kes })) + p(t(lang, 'keepOpen'), 'muted');
  } else if (s === 'mpesa-failed') {
    body = `<p data-testid="mpesa-failure">${esc(mpesaFailureText(lang, v.mobileMoney?.failureCode ?? 'unknown'))}</p>` + p(t(lang, 'retryHint'), 'muted');
  } else if (s === 'seen') {
    body = p(seenText(v, lang)) + p(t(lang, 'keepOpen'), 'muted');
  } else if (s === 'underpaid') {
    body = `<p data-testid="underpaid">${esc(t(lang, 'underpaidBody', { received: usdt(v.amountReceived), due: usdt(v.amountDue) }))}</p>`;
  } else if (s === 'confirmed') {
    body = receipt(v, lang);
  } else if (s === 'expired') {
    body = p(t(lang, 'expiredBody', { store: v.storeName })) + p(t(lang, 'expiredPaidAnyway', { store: v.storeName }), 'muted');
  } else {
    body = p(t(lang, 'cancelledBody', { store: v.storeName }));
  }
  const testId = isFinal(s) ? 'final-state' : 'state';
  const tone = s === 'confirmed' ? ' ok' : s === 'mpesa-failed' || s === 'expired' || s === 'cancelled' ? ' bad' : ' busy';
  return `<section class="state${tone}" data-testid="${testId}" data-state="${s}" aria-labelledby="state-title">
<h2 class="big" id="state-title" tabindex="-1">${esc(stateTitle(lang, s))}</h2>
${body}
</section>`;
}

function seenText(v: CheckoutView, lang: Lang): string {
  const d = v.deposit!;
  const rail = isRailId(d.rail) ? railFacts[d.rail] : null;
  const vars = { amount: formatUsdtAmount(lang, d.amount), network: railName(d.rail), time: formatDuration(lang, rail?.estimatedConfirmationSeconds ?? 60) };
  if (d.confirmations !== null && d.requiredConfirmations !== null) {
    return t(lang, 'seenConfirmations', { ...vars, count: Math.min(d.confirmations, d.requiredConfirmations), required: d.requiredConfirmations });
  }
  if (d.confirmations !== null) return t(lang, 'seenFinality', { ...vars, count: d.confirmations });
  return t(lang, 'seenNoCount', vars);
}

function receipt(v: CheckoutView, lang: Lang): string {
  const byMpesa = paidByPrompt(v.confirmedRail ?? '');
  const amount = byMpesa ? formatKes(lang, v.mobileMoneyAmount ?? 0) : formatUsdtAmount(lang, v.amountReceived);
  const row = (label: string, value: string, extra = '') => `<div><dt>${esc(label)}</dt><dd${extra}>${esc(value)}</dd></div>`;
  const lines = [
    byMpesa ? `<p data-testid="paid-amount">${esc(t(lang, 'paidByMpesa', { amount }))}</p>` : '',
    byMpesa && v.mobileMoneyReceipt ? `<p data-testid="receipt">${esc(t(lang, 'mpesaReceipt', { receipt: v.mobileMoneyReceipt }))}</p>` : '',
    `<dl class="receipt" aria-label="${esc(t(lang, 'receiptTitle'))}">`,
    row(t(lang, 'receiptRail'), railName(v.confirmedRail)),
    row(t(lang, 'receiptAmount'), amount, ' data-testid="receipt-amount"'),
    v.confirmedReference ? row(t(lang, 'receiptReference'), v.confirmedReference, ' class="ref" data-testid="receipt-reference"') : '',
    v.confirmedAt ? `<div><dt>${esc(t(lang, 'receiptTime'))}</dt><dd><time datetime="${esc(v.confirmedAt)}">${esc(formatDateTime(lang, v.confirmedAt))}</time></dd></div>` : '',
    `</dl>`,
    `<p class="muted">${esc(t(lang, 'thanks', { store: v.storeName }))}</p>`,
    isWebUrl(v.redirectUrl) ? `<a class="primary" href="${esc(v.redirectUrl)}">${esc(t(lang, 'backTo', { store: v.storeName }))}</a>` : '',
  ];
  return lines.filter(Boolean).join('\n');
}
