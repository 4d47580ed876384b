import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import type { FindingDto } from '../../services/reconciliation/dto.js';
import { listReconciliationFindings } from '../../services/reconciliation/findings.js';
import { sendPage, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { dashboardPage, formatTime } from './layout.js';
import type { DashboardSession } from './session.js';

/** The newest findings the page shows (the API's largest page). */
const shownFindings = 100;

const statusClass: Record<FindingDto['status'], string> = { open: 'status-cancelled', resolved: 'status-confirmed', noted: 'status-expired' };

function ownerCell(f: FindingDto): SafeHtml {
  if (f.owner.type === 'payment_link' && f.owner.id) return html`<a href="/dashboard/links/${f.owner.id}" class="link-id">${f.owner.id}</a>`;
  if (f.owner.type === 'invoice') return html`invoice <code>${f.owner.id ?? ''}</code>`;
  return html`derived, index ${f.owner.index ?? '—'}`;
}

function findingRow(f: FindingDto): SafeHtml {
  return html`<tr data-finding="${f.id}">
<td>${formatTime(f.createdAt)}</td><td data-testid="finding-kind">${f.kind}</td>
<td><span class="status ${statusClass[f.status]}" data-testid="finding-status">${f.status}</span></td>
<td>${f.network}</td><td><code>${f.address}</code><br><small>${ownerCell(f)}</small></td>
<td>${f.balance}</td><td>${f.expected}</td><td data-testid="finding-difference">${f.difference}</td><td>${f.blockNumber}</td></tr>`;
}

/** The session's store's reconciliation findings in its environment, newest first (docs/reconciliation.md). */
export async function renderReconciliationPage(deps: ApiDeps, session: DashboardSession): Promise<string> {
  const findings = await listReconciliationFindings(deps, session.auth, { limit: shownFindings });
  const body = html`<p class="muted">On a schedule, Malipo compares the USDT balance of every address it watches for you with the
deposits it recorded there, and looks again, on every configured node, for any transfer it cannot account for.
A <strong>mismatch</strong> is money on an address that no recorded deposit explains (you also get a
<code>reconciliation.mismatch</code> webhook); it is resolved once the deposit is found. An <strong>outflow</strong> is money that
left an address (usually your own sweep): noted only. The API reads the same list at <code>/v1/reconciliation/findings</code>.</p>
<section class="card"><h2>Findings</h2>
${findings.length
    ? html`<table class="table" data-testid="findings" tabindex="0" aria-label="Reconciliation findings"><thead><tr><th>Found</th><th>Kind</th><th>Status</th><th>Network</th><th>Address</th><th>Balance</th><th>Expected</th><th>Difference</th><th>Block</th></tr></thead>
<tbody>${findings.map(findingRow)}</tbody></table>`
    : html`<p class="empty">Nothing to report: every balance matches the recorded deposits.</p>`}
</section>`;
  return dashboardPage(session, 'reconciliation', 'Reconciliation', body);
}

export function registerReconciliationPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/reconciliation',
    withSession(deps, async (session, _request, reply) => sendPage(reply, 200, await renderReconciliationPage(deps, session))),
  );
}
