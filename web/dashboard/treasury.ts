import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { parseTreasuryRail, sweepableRails, treasuryBalances, type TreasuryRailDto } from '../../services/treasury/balances.js';
import { railFacts } from '../../rails/registry.js';
import type { UsdtRail } from '../../domain/rails.js';

const railDisplayName = (r: UsdtRail) => railFacts[r].displayName;
import { addSweepDestination, listSweepDestinations, removeSweepDestination, type SweepDestinationDto } from '../../services/treasury/destinations.js';
import { recentSweeps, type SweepDto } from '../../services/treasury/sweep-ledger.js';
import { attempt, noErrors, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, fieldError, formatTime, notice } from './layout.js';
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

function destinationsSection(deps: ApiDeps, session: DashboardSession, list: SweepDestinationDto[], errors: FormErrors, form: Record<string, string>): SafeHtml {
  const owner = can(session, 'owner');
  const hours = Math.round((deps.config.treasuryDestinationDelaySeconds / 3600) * 10) / 10;
  const sweepable = sweepableRails().map((r) => ({ rail: r, displayName: railDisplayName(r) }));
  const rows = list.map(
    (d) => html`<tr data-destination="${d.id}"><td>${d.rail}</td><td><code>${d.address}</code>${d.label ? html`<br><small>${d.label}</small>` : ''}</td>
<td data-testid="destination-state">${d.usable ? 'usable' : html`usable from ${formatTime(d.usableAt)}`}</td><td>${formatTime(d.createdAt)}</td>
<td>${owner ? html`<form method="post" action="/dashboard/treasury/destinations/${d.id}/remove">${csrfField(session)}<button type="submit" class="danger">Remove</button></form>` : ''}</td></tr>`,
  );
  const add = owner
    ? html`<form method="post" action="/dashboard/treasury/destinations" data-testid="add-destination">${csrfField(session)}
${notice('error', errors.form)}
<div class="field"><label for="f-rail">Rail</label><select id="f-rail" name="rail">${sweepable.map(
        (r) => html`<option value="${r.rail}"${form.rail === r.rail ? html` selected` : ''}>${r.displayName} (${r.rail})</option>`,
      )}</select>${fieldError(errors, 'rail')}</div>
${field({ name: 'address', label: 'Address', errors, value: form.address, required: true, hint: 'An address you control, e.g. a hardware wallet or an exchange deposit address.' })}
${field({ name: 'label', label: 'Label (optional)', errors, value: form.label })}
<button type="submit">Add destination</button></form>`
    : html`<p class="muted">Only owners add or remove destinations.</p>`;
  return html`<section class="card" id="destinations"><h2>Sweep destinations</h2>
<p class="muted">Where a sweep may send this store's money. Only owners change this list, here; API keys cannot. A new destination
becomes usable ${hours} hour(s) after it is added, so a leaked key or a borrowed session cannot redirect funds at once.</p>
${list.length
    ? html`<table class="table" data-testid="destinations" aria-label="Sweep destinations"><thead><tr><th>Rail</th><th>Address</th><th>State</th><th>Added</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="empty">No destination yet.</p>`}
${add}
</section>`;
}

/** Sweeps shown on the page: the most recent broadcast ones. */
const shownSweeps = 20;

const sweepStateClass: Record<NonNullable<SweepDto['state']>, string> = {
  broadcast: 'status-pending', mined: 'status-pending', final: 'status-confirmed', partially_completed: 'status-cancelled', failed: 'status-cancelled',
};

function sweepsSection(list: SweepDto[]): SafeHtml {
  const rows = list.map((s) => {
    const transfers = s.transactions.filter((t) => t.kind === 'transfer');
    const topUps = s.transactions.filter((t) => t.kind === 'top_up');
    const loans = s.transactions.filter((t) => t.kind === 'delegate');
    const state = s.state ?? 'broadcast';
    return html`<tr data-sweep="${s.id}"><td><code>${s.id}</code><br><small>${s.rail}</small></td><td><code>${s.destination}</code></td>
<td data-testid="sweep-total">${s.totalToken} ${s.tokenSymbol}</td>
<td>${transfers.length} transfer(s), ${topUps.length} top-up(s)${loans.length ? html`, energy lent to ${loans.length} address(es)` : ''}<br><small>${s.transactions.filter((t) => t.state === 'final').length}/${s.transactions.length} final</small></td>
<td><span class="status ${sweepStateClass[state]}" data-testid="sweep-state">${state}</span></td>
<td>${s.broadcastAt ? formatTime(s.broadcastAt) : '—'}${s.finishedAt ? html`<br><small>ended ${formatTime(s.finishedAt)}</small>` : ''}</td></tr>`;
  });
  return html`<section class="card" id="sweeps"><h2>Recent sweeps</h2>
<p class="muted">Sweeps broadcast with <code>POST /v1/sweeps/:id/broadcast</code>: <em>mined</em> once every transaction is in a block,
<em>final</em> once each stands at the rail's confirmation depth, <em>failed</em> when one reverted or the broadcast was cut short (plan again).
Swept amounts are not payments; the reconciler counts them out of each address.</p>
${list.length
    ? html`<table class="table" data-testid="sweeps" tabindex="0" aria-label="Recent sweeps"><thead><tr><th>Sweep</th><th>Destination</th><th>Moved</th><th>Transactions</th><th>State</th><th>Broadcast</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="empty">No sweep broadcast yet.</p>`}
</section>`;
}

/** The session's store's treasury in its environment: per rail, the totals and the addresses (docs/treasury.md); its sweep destinations. */
export async function renderTreasuryPage(
  deps: ApiDeps,
  session: DashboardSession,
  q: { rail?: string; cursor?: string },
  opts: { errors?: FormErrors; form?: Record<string, string>; banner?: SafeHtml } = {},
): Promise<string> {
  const rail = q.rail ? parseTreasuryRail(q.rail) : undefined;
  const rails = await treasuryBalances(deps, session.auth, { rail, cursor: rail ? q.cursor : undefined, limit: shownAddresses });
  const destinations = await listSweepDestinations(deps, session.auth);
  const sweeps = await recentSweeps(deps, session.auth, shownSweeps);
  const body = html`<p class="muted">What sits on the addresses Malipo handed out for your payment links, invoices and derived wallets,
read from each chain just now, with the chain's own coin each address holds for gas. These addresses are on branches of your key
that wallet apps do not show; each one's derivation path is listed. The API reads the same at <code>/v1/treasury/balances</code>.</p>
${rail ? html`<p><a href="/dashboard/treasury">Every rail</a></p>` : html``}
${opts.banner ?? ''}
${rails.map(railSection)}
${sweepsSection(sweeps)}
${destinationsSection(deps, session, destinations, opts.errors ?? noErrors, opts.form ?? {})}`;
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

  app.post(
    '/treasury/destinations',
    withAction(deps, async (session, form, request, reply) => {
      const input = { rail: form.get('rail') ?? '', address: form.get('address') ?? '', label: form.get('label') ?? '' };
      const result = await attempt(() => addSweepDestination(deps, session.auth, session.user.id, input), ['rail', 'address', 'label']);
      if (!result.ok) return sendPage(reply, result.status, await renderTreasuryPage(deps, session, {}, { errors: result.errors, form: input }));
      request.log.info({ storeId: session.auth.storeId, by: session.user.id, destination: result.value.id, rail: result.value.rail }, 'sweep destination added');
      return reply.redirect('/dashboard/treasury#destinations', 303);
    }, { role: 'owner' }),
  );

  app.post(
    '/treasury/destinations/:id/remove',
    withAction(deps, async (session, _form, request, reply) => {
      const { id } = request.params as { id: string };
      await removeSweepDestination(deps, session.auth, id, session.user.id);
      request.log.info({ storeId: session.auth.storeId, by: session.user.id, destination: id }, 'sweep destination removed');
      return reply.redirect('/dashboard/treasury#destinations', 303);
    }, { role: 'owner' }),
  );
}
