import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { parseTreasuryRail, treasuryBalances, type TreasuryRailDto } from '../../services/treasury/balances.js';
import { sendPage, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { dashboardPage, formatTime } from './layout.js';
import type { DashboardSession } from './session.js';

/** Addresses a rail's table shows per page. */
const shownAddresses = 100;

const statusClass: Record<TreasuryRailDto['status'], string> = {
  read: 'status-confirmed', nothing_to_sweep: 'status-expired', not_built: 'status-expired', not_configured: 'status-expired', unavailable: 'status-cancelled',
};

function ownerCell(a: TreasuryRailDto['addresses'][number]): SafeHtml {
  if (a.source === 'payment_link' && a.ownerId) return html`<a href="/dashboard/links/${a.ownerId}" class="link-id">${a.ownerId}</a>`;
  if (a.source === 'invoice') return html`invoice <code>${a.ownerId ?? ''}</code>`;
  return html`derived`;
}

function railSection(r: TreasuryRailDto): SafeHtml {
  const head = html`<h2>${r.displayName} <small class="muted">${r.rail}</small>
<span class="status ${statusClass[r.status]}" data-testid="treasury-status">${r.status.replace(/_/g, ' ')}</span></h2>`;
  if (r.status === 'nothing_to_sweep' || r.status === 'not_built') {
    return html`<section class="card" data-treasury-rail="${r.rail}">${head}<p class="muted" data-testid="treasury-message">${r.message ?? ''}</p></section>`;
  }
  const read = r.blockNumber !== null
    ? html`<p class="muted">Read at block ${r.blockNumber} (${formatTime(r.blockTime!)}), ${formatTime(r.readAt)}.${r.unreadCount ? html` <strong>${r.unreadCount}</strong> address(es) could not be read and are not in the total.` : ''}</p>`
    : html``;
  const rows = r.addresses.map(
    (a) => html`<tr data-address="${a.address}"><td><code>${a.address}</code><br><small>${ownerCell(a)}</small></td><td><code>${a.path ?? '—'}</code></td>
<td data-testid="token-balance">${a.tokenBalance ?? '—'}</td><td data-testid="native-balance">${a.nativeBalance ?? '—'}</td></tr>`,
  );
  const more = r.nextCursor ? html`<p><a href="/dashboard/treasury?rail=${r.rail}&amp;cursor=${r.nextCursor}" data-testid="treasury-next">Next addresses</a></p>` : html``;
  return html`<section class="card" data-treasury-rail="${r.rail}">${head}
${r.message ? html`<p class="muted" data-testid="treasury-message">${r.message}</p>` : html``}
<dl class="facts"><dt>${r.tokenSymbol} held</dt><dd data-testid="total-token">${r.totalToken}</dd>
<dt>${r.nativeCoin ?? 'Native coin'} held (gas)</dt><dd data-testid="total-native">${r.totalNative}</dd>
<dt>Addresses</dt><dd data-testid="address-count">${r.addressCount}</dd></dl>
${read}
${r.addresses.length
    ? html`<table class="table" tabindex="0" aria-label="${r.displayName} addresses"><thead><tr><th>Address</th><th>Derivation path</th><th>${r.tokenSymbol}</th><th>${r.nativeCoin ?? 'Native'}</th></tr></thead>
<tbody>${rows}</tbody></table>${more}`
    : html`<p class="empty">No address handed out on this rail yet.</p>`}
</section>`;
}

/** The session's store's treasury in its environment: per rail, the totals and the addresses (docs/treasury.md). */
export async function renderTreasuryPage(deps: ApiDeps, session: DashboardSession, q: { rail?: string; cursor?: string }): Promise<string> {
  const rail = q.rail ? parseTreasuryRail(q.rail) : undefined;
  const rails = await treasuryBalances(deps, session.auth, { rail, cursor: rail ? q.cursor : undefined, limit: shownAddresses });
  const body = html`<p class="muted">What sits on the addresses Malipo handed out for your payment links, invoices and derived wallets,
read from each chain just now, with the chain's own coin each address holds for gas. These addresses are on branches of your key
that wallet apps do not show; each one's derivation path is listed. The API reads the same at <code>/v1/treasury/balances</code>.</p>
${rail ? html`<p><a href="/dashboard/treasury">Every rail</a></p>` : html``}
${rails.map(railSection)}`;
  return dashboardPage(session, 'treasury', 'Treasury', body);
}

export function registerTreasuryPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/treasury',
    withSession(deps, async (session, request: FastifyRequest, reply) => {
      const query = request.query as { rail?: unknown; cursor?: unknown };
      const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
      // A bad rail or cursor is an AppError: the dashboard's error page answers it with its status.
      return sendPage(reply, 200, await renderTreasuryPage(deps, session, { rail: text(query.rail), cursor: text(query.cursor) }));
    }),
  );
}
