import type { LinkDetail } from '../../services/payment-links/link-detail.js';
import type { TimelineEntry } from '../../services/payment-links/timeline.js';
import { shownPayer } from '../../domain/phone.js';
import type { RailId } from '../../domain/rails.js';
import { railFacts as rails } from '../../rails/registry.js';
import { can } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, formatTime } from './layout.js';
import type { DashboardSession } from './session.js';


export interface LinkDetailView extends LinkDetail {
  /** The workflow in the Temporal Web UI, or null when no UI is known. */
  temporalUiHref: string | null;
}

const railName = (r: string) => rails[r as RailId]?.displayName ?? r;

/** `<ui>/namespaces/<ns>/workflows/<id>`: the UI opens the workflow's latest run. */
export function temporalUiHref(uiUrl: string | undefined, namespace: string, workflowId: string): string | null {
  if (!uiUrl) return null;
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

function fact(label: string, value: SafeHtml | string | null | undefined, testId?: string): SafeHtml {
  if (value === null || value === undefined || value === '') return html``;
  return html`<dt>${label}</dt><dd${testId ? html` data-testid="${testId}"` : ''}>${value}</dd>`;
}

const code = (value: string | null) => (value ? html`<code>${value}</code>` : null);

/**
 * What the link received, one line per currency (amountsReceived): a currency appears when
 * something was received in it; "0 USDT" when nothing was received at all.
 */
function received(amounts: Record<string, string>): SafeHtml {
  const got = Object.entries(amounts).filter(([, v]) => v !== '0');
  const shown = got.length ? got : [['USDT', '0']];
  return html`${shown.map(([c, v], i) => html`${i ? html`<br>` : ''}<span data-currency="${c}">${v} ${c}</span>`)}`;
}

function facts(v: LinkDetailView): SafeHtml {
  const l = v.link;
  const kes = l.mobileMoneyAmount === null ? null : `KES ${l.mobileMoneyAmount.toLocaleString('en-US')}${l.kesPerUsdt ? ` (at ${l.kesPerUsdt} KES per USDT)` : ''}`;
  return html`<section class="card" aria-labelledby="link-facts">
<h2 id="link-facts">Link</h2>
<dl class="facts">
${fact('Status', html`<span class="status status-${l.status.toLowerCase()}">${l.status}</span>${l.simulated ? html` <small>simulated</small>` : ''}`, 'link-status')}
${fact('Amount', `${l.usdtAmount} USDT`, 'link-amount')}
${fact('M-Pesa amount', kes)}
${fact('Received', received(l.amountsReceived), 'link-received')}
${fact('Rails', l.enabledRails.map(railName).join(', '))}
${fact('Checkout', html`<a href="${l.checkoutUrl}" target="_blank" rel="noopener" class="checkout-link">${l.checkoutUrl}</a> <button type="button" class="copy" data-copy="${l.checkoutUrl}">Copy</button>`)}
${fact('TRON address', code(l.tronAddress))}
${fact('BSC address', code(l.bscAddress))}
${fact('Ethereum address', code(l.ethAddress))}
${fact('Polygon address', code(l.polygonAddress))}
${fact('Solana address', code(l.solanaAddress))}
${fact('Solana reference', code(l.solanaReference))}
${fact('Solana Pay URL', code(l.solanaPayUrl))}
${fact('M-Pesa shortcode', l.mobileMoneyShortcode)}
${fact('Description', l.description)}
${fact('Reference', l.merchantRef, 'link-ref')}
${fact('Metadata', l.metadata ? html`<pre class="json" data-testid="link-metadata">${JSON.stringify(l.metadata, null, 2)}</pre>` : null)}
${fact('Return address', l.redirectUrl)}
${fact('Created', formatTime(l.createdAt))}
${fact('Expires', formatTime(l.expiresAt))}
${fact('Confirmed', l.confirmedAt ? `${formatTime(l.confirmedAt)} on ${railName(l.confirmedRail ?? '')}` : null)}
${fact('Payer', shownPayer(l.payer), 'link-payer')}
${fact('Transaction', code(l.externalId))}
${fact('Simulated-only rails', l.simulatedOnlyRails.length ? l.simulatedOnlyRails.map(railName).join(', ') : null)}
</dl>
</section>`;
}

function payments(v: LinkDetailView): SafeHtml {
  const list = v.link.payments;
  return html`<section class="card" aria-labelledby="link-payments">
<h2 id="link-payments">Payments</h2>
${list.length === 0
    ? html`<p class="empty">No payment seen yet.</p>`
    : html`<table class="table" data-testid="payments" tabindex="0" aria-labelledby="link-payments">
<thead><tr><th>Rail</th><th>Amount</th><th>State</th><th>Counted as</th><th>Payer</th><th>Reference</th><th>Seen</th></tr></thead>
<tbody>${list.map(
        (p) => html`<tr data-payment>
<td>${railName(p.rail)}</td><td>${p.amount ?? '—'} ${p.currency}</td>
<td>${p.state}${p.failureReason ? html`<br><small>${p.failureReason}</small>` : ''}</td><td>${p.disposition ?? '—'}</td>
<td>${shownPayer(p.payer) ?? '—'}</td><td>${p.externalId ? html`<code class="wrap-any">${p.externalId}</code>` : '—'}</td><td>${formatTime(p.createdAt)}</td>
</tr>`,
      )}</tbody></table>`}
</section>`;
}

const exactTime = (iso: string | null) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : 'time not recorded');

function timeline(v: LinkDetailView): SafeHtml {
  const entry = (e: TimelineEntry) => html`<li class="tl tl-${e.tone}" data-source="${e.source}">
<time${e.at ? html` datetime="${e.at}"` : ''}>${exactTime(e.at)}</time>
<div><strong>${e.title}</strong> <span class="tl-source">${e.source === 'workflow' ? 'engine' : 'records'}</span>${e.detail ? html`<br><small>${e.detail}</small>` : ''}</div>
</li>`;
  return html`<section class="card" aria-labelledby="link-timeline">
<div class="row"><h2 id="link-timeline">Timeline</h2>${
    v.temporalUiHref ? html`<a href="${v.temporalUiHref}" target="_blank" rel="noopener" data-testid="temporal-ui">Open the workflow in Temporal ↗</a>` : ''
  }</div>
${v.engineNote ? html`<p class="notice warn" role="note" data-testid="engine-note">${v.engineNote}</p>` : ''}
<ol class="timeline" data-testid="timeline">${v.timeline.map(entry)}</ol>
<p class="muted small">Workflow <code>${v.workflowId}</code>. “Engine” steps come from the workflow’s history in Temporal; “records” from Malipo’s database.</p>
</section>`;
}

function actions(session: DashboardSession, v: LinkDetailView): SafeHtml {
  const l = v.link;
  if (!can(session, 'developer') || l.status !== 'PENDING') return html``;
  const simulate = session.auth.environment === 'test';
  return html`<section class="card" aria-labelledby="link-actions">
<h2 id="link-actions">Actions</h2>
<div class="link-actions">
${simulate
    ? html`<form method="post" action="/dashboard/links/${l.id}/simulate" class="filter" data-testid="simulate-form">
${csrfField(session)}
<label for="f-rail">Simulate a payment on</label>
<select id="f-rail" name="rail">${l.enabledRails.map((r) => html`<option value="${r}">${railName(r)}</option>`)}</select>
<button type="submit">Simulate payment</button>
</form>`
    : ''}
<form method="post" action="/dashboard/links/${l.id}/cancel" data-confirm="Cancel this payment link? The customer can no longer pay it.">
${csrfField(session)}
<button type="submit" class="danger">Cancel link</button>
</form>
</div>
${simulate ? html`<p class="muted small">Test mode: a simulated payment runs the real workflow path (confirmation, webhook) with no money moving.</p>` : ''}
</section>`;
}

export function linkDetailBody(session: DashboardSession, v: LinkDetailView, banner: SafeHtml): SafeHtml {
  return html`<p class="small"><a href="/dashboard">← All payment links</a></p>
${banner}
${actions(session, v)}
${facts(v)}
${timeline(v)}
${payments(v)}`;
}
