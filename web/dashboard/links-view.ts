import type { PaymentLinkDto } from '../../services/payment-links/dto.js';
import { railIds, type RailId } from '../../domain/rails.js';
import { railFacts as rails } from '../../rails/registry.js';
import { shownPayer } from '../../domain/phone.js';
import { linkStatuses } from '../../domain/states.js';
import type { FormErrors } from './forms.js';
import { can } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, field, fieldError, formatTime, formError } from './layout.js';
import type { DashboardSession } from './session.js';

/** A row of the list: the link's list record, the rail that paid it and the payer. */
export type LinkRowView = PaymentLinkDto & { confirmedRail: string | null; payer: string | null };

export interface LinksView {
  links: LinkRowView[];
  status: string | undefined;
  /** The exact merchantRef searched for, if any. */
  merchantRef: string | undefined;
  page: number;
  limit: number;
  total: number;
  available: RailId[];
  /** Values typed into the create form, shown again next to the errors. */
  values: Record<string, string | string[]>;
  errors: FormErrors;
}

const whereToConnect: Record<RailId, string> = {
  MOBILE_MONEY: '/dashboard/mobile-money',
  USDT_TRON: '/dashboard/wallets',
  USDT_BSC: '/dashboard/wallets',
  USDT_ETH: '/dashboard/wallets',
  USDT_POLYGON: '/dashboard/wallets',
  USDT_SOL: '/dashboard/wallets',
};

function railChoices(v: LinksView): SafeHtml {
  const picked = Array.isArray(v.values.enabledRails) ? v.values.enabledRails : [];
  return html`<fieldset class="field"${v.errors.fields.enabledRails ? html` aria-invalid="true"` : ''}>
  <legend>Rails</legend>
  <div class="choices">${railIds.map((id) => {
    const on = v.available.includes(id);
    return html`<label class="choice${on ? '' : ' off'}"><input type="checkbox" name="enabledRails" value="${id}"${
      picked.includes(id) ? html` checked` : ''
    }${on ? '' : html` disabled`}> ${rails[id].displayName}${rails[id].tokenStandard ? html` <small>USDT ${rails[id].tokenStandard}</small>` : ''}${
      on ? '' : html` <a href="${whereToConnect[id]}" class="small">connect</a>`
    }</label>`;
  })}</div>
  ${fieldError(v.errors, 'enabledRails')}
</fieldset>`;
}

function createForm(session: DashboardSession, v: LinksView): SafeHtml {
  const value = (name: string) => (typeof v.values[name] === 'string' ? (v.values[name] as string) : undefined);
  const e = v.errors;
  return html`<section class="card" aria-labelledby="new-link">
<h2 id="new-link">New payment link</h2>
${formError(e)}
<form method="post" action="/dashboard/links" novalidate>
${csrfField(session)}
${railChoices(v)}
<div class="grid">
${field({ name: 'usdtAmount', label: 'Amount (USDT)', value: value('usdtAmount'), errors: e, placeholder: '10.50', hint: 'Optional for an M-Pesa-only link' })}
${field({ name: 'mobileMoneyAmount', label: 'Amount (KES)', type: 'number', value: value('mobileMoneyAmount'), errors: e, hint: 'Optional: converted from USDT at the rate when left empty' })}
${field({ name: 'description', label: 'Description', value: value('description'), errors: e, hint: 'Shown to the customer' })}
${field({ name: 'merchantRef', label: 'Your reference', value: value('merchantRef'), errors: e, hint: 'Echoed in webhooks, e.g. an order number' })}
${field({ name: 'expiresInMinutes', label: 'Expires in (minutes)', type: 'number', value: value('expiresInMinutes'), errors: e, placeholder: '1440' })}
${field({ name: 'redirectUrl', label: 'Return address', type: 'url', value: value('redirectUrl'), errors: e, hint: 'Optional: where the checkout sends the customer back' })}
</div>
${metadataField(value('metadata'), e)}
<button type="submit" class="primary">Create link</button>
</form>
</section>`;
}

/** Metadata as a JSON object, checked by the API's own schema (depth, 16 KB) once parsed. */
function metadataField(value: string | undefined, e: FormErrors): SafeHtml {
  const error = e.fields.metadata;
  return html`<div class="field">
  <label for="f-metadata">Metadata (JSON object)</label>
  <textarea id="f-metadata" name="metadata" rows="3" spellcheck="false" placeholder='{"orderId": "A-17"}'${error ? html` aria-invalid="true"` : ''} aria-describedby="f-metadata-hint${error ? ' f-metadata-error' : ''}">${value ?? ''}</textarea>
  <small id="f-metadata-hint" class="hint">Optional: your own data, returned as sent in the API and webhooks (at most 16 KB)</small>
  ${fieldError(e, 'metadata')}
</div>`;
}

function filter(v: LinksView): SafeHtml {
  return html`<form method="get" action="/dashboard" class="filter" role="search">
<label for="status">Status</label>
<select id="status" name="status">
<option value="">All</option>
${linkStatuses.map((s) => html`<option value="${s}"${s === v.status ? html` selected` : ''}>${s.charAt(0) + s.slice(1).toLowerCase()}</option>`)}
</select>
<label for="merchantRef">Reference</label>
<input id="merchantRef" name="merchantRef" type="search" value="${v.merchantRef ?? ''}" placeholder="exact, e.g. order-77" maxlength="200">
<button type="submit">Filter</button>
${v.status || v.merchantRef ? html`<a href="/dashboard" class="small">Clear</a>` : ''}
</form>`;
}

function amount(l: PaymentLinkDto): string {
  const kes = l.mobileMoneyAmount === null ? '' : ` · KES ${l.mobileMoneyAmount.toLocaleString('en-US')}`;
  return `${l.usdtAmount} USDT${kes}`;
}

/** The rail that paid the link and who paid, the phone masked as on every page; a dash until paid. */
function paidWith(l: LinkRowView): SafeHtml | string {
  if (!l.confirmedRail) return '—';
  const payer = shownPayer(l.payer);
  return html`${rails[l.confirmedRail as RailId]?.displayName ?? l.confirmedRail}${payer ? html`<br><small class="wrap-any">${payer}</small>` : ''}`;
}

function table(v: LinksView): SafeHtml {
  if (v.links.length === 0) {
    const filters = [v.status && `with status ${v.status}`, v.merchantRef && `with reference “${v.merchantRef}”`].filter(Boolean).join(' and ');
    return html`<p class="empty">No payment links${filters ? ` ${filters}` : ''} yet.</p>`;
  }
  return html`<table class="table" data-testid="links">
<thead><tr><th>Link</th><th>Status</th><th>Amount</th><th>Paid with</th><th>Rails</th><th>Reference</th><th>Created</th><th>Expires</th></tr></thead>
<tbody>${v.links.map(
    (l) => html`<tr data-link="${l.id}">
<td><a href="/dashboard/links/${l.id}" class="link-id">${l.id}</a>${l.description ? html`<br><small>${l.description}</small>` : ''}</td>
<td><span class="status status-${l.status.toLowerCase()}">${l.status}</span></td>
<td>${amount(l)}</td>
<td data-testid="paid-with">${paidWith(l)}</td>
<td>${l.enabledRails.map((r) => rails[r as RailId]?.displayName ?? r).join(', ')}</td>
<td>${l.merchantRef ?? '—'}</td>
<td>${formatTime(l.createdAt)}</td>
<td>${formatTime(l.expiresAt)}</td>
</tr>`,
  )}</tbody>
</table>`;
}

function pagination(v: LinksView): SafeHtml {
  const pages = Math.max(1, Math.ceil(v.total / v.limit));
  const href = (page: number) =>
    `/dashboard?${new URLSearchParams({ ...(v.status ? { status: v.status } : {}), ...(v.merchantRef ? { merchantRef: v.merchantRef } : {}), page: String(page) })}`;
  return html`<nav class="pager" aria-label="Pages">
${v.page > 1 ? html`<a href="${href(v.page - 1)}" rel="prev">← Newer</a>` : html`<span></span>`}
<span class="muted">Page ${v.page} of ${pages} · ${v.total} link${v.total === 1 ? '' : 's'}</span>
${v.page < pages ? html`<a href="${href(v.page + 1)}" rel="next">Older →</a>` : html`<span></span>`}
</nav>`;
}

/**
 * The overview: the store's links first (what a merchant opens the dashboard for), then the create
 * form for those who may create, which the "New payment link" button jumps to.
 */
export function linksBody(session: DashboardSession, v: LinksView, banner: SafeHtml): SafeHtml {
  const creates = can(session, 'developer');
  return html`${banner}
<section class="card" aria-labelledby="all-links">
<div class="row"><h2 id="all-links">Payment links</h2>${creates ? html`<a href="/dashboard/links/new" class="button primary" data-testid="new-link">New payment link</a>` : ''}</div>
${filter(v)}
${table(v)}
${pagination(v)}
</section>
${creates ? createForm(session, v) : ''}`;
}

/** `/dashboard/links/new`: the create form alone, and where a refused form comes back with its errors. */
export function newLinkBody(session: DashboardSession, v: LinksView): SafeHtml {
  return html`<p><a href="/dashboard/links">← Payment links</a></p>
${createForm(session, v)}`;
}
