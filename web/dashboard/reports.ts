import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import type { ReportPeriod } from '../../services/reports/period.js';
import { AppError } from '../../domain/errors.js';
import { paymentsReportStream, paymentsReportTotals, type ReportTotalDto } from '../../services/reports/payments-report.js';
import { reportPeriod } from '../../services/reports/period.js';
import { sendPage, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { dashboardPage } from './layout.js';
import type { DashboardSession } from './session.js';

/**
 * The Reports page (docs/reports.md): a period of whole days (UTC, both ends included), the
 * totals of the payments counted in it per rail and currency, and the CSV download, the same
 * file as `GET /v1/reports/payments`. Reads only; the session's store and environment.
 */
const day = /^\d{4}-\d{2}-\d{2}$/;
const iso = (d: Date) => d.toISOString().slice(0, 10);

interface Days {
  from: string;
  /** Inclusive. */
  to: string;
}

/** The days asked for, or the month so far (UTC). */
function daysOf(request: FastifyRequest): Days {
  const q = request.query as Record<string, unknown>;
  const today = new Date();
  const from = typeof q.from === 'string' && q.from ? q.from : iso(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1)));
  const to = typeof q.to === 'string' && q.to ? q.to : iso(today);
  return { from, to };
}

/** [from, the day after `to`): refuses what is not a day, as the API does. */
function periodOf(session: DashboardSession, d: Days): ReportPeriod {
  for (const [param, v] of Object.entries(d)) {
    if (!day.test(v)) throw new AppError('invalid_field', `Invalid '${param}': a day, YYYY-MM-DD.`, param);
  }
  const end = new Date(`${d.to}T00:00:00Z`);
  if (Number.isNaN(end.getTime())) throw new AppError('invalid_field', "Invalid 'to': a day, YYYY-MM-DD.", 'to');
  const period = reportPeriod(session.auth, { from: d.from, to: iso(new Date(end.getTime() + 86_400_000)) });
  return period;
}

function totalsTable(totals: ReportTotalDto[]): SafeHtml {
  if (totals.length === 0) return html`<p class="empty" data-testid="report-empty">No payment was counted in this period.</p>`;
  const kes = totals.reduce((s, t) => s + BigInt(t.kesValue), 0n);
  const count = totals.reduce((s, t) => s + t.payments, 0);
  const missing = totals.reduce((s, t) => s + t.withoutKesValue, 0);
  return html`<table class="table" data-testid="report-totals" tabindex="0" aria-label="Totals per rail and currency">
<thead><tr><th>Rail</th><th>Currency</th><th>Payments</th><th>Amount</th><th>KES value</th></tr></thead>
<tbody>${totals.map((t) => html`<tr data-total="${t.rail}">
<td>${t.rail}</td><td>${t.currency}</td><td data-testid="total-payments">${t.payments}</td><td data-testid="total-amount">${t.amount} ${t.currency}</td>
<td data-testid="total-kes">${t.kesValue}${t.withoutKesValue ? html` <small>(${t.withoutKesValue} without a rate)</small>` : ''}</td></tr>`)}</tbody>
<tfoot><tr><th scope="row" colspan="2">All rails</th><td data-testid="all-payments">${count}</td><td></td><td data-testid="all-kes">KES ${kes.toString()}${missing ? html` <small>(${missing} without a rate)</small>` : ''}</td></tr></tfoot>
</table>`;
}

export async function renderReportsPage(deps: ApiDeps, session: DashboardSession, d: Days): Promise<string> {
  const period = periodOf(session, d);
  const totals = await paymentsReportTotals(deps.pool, period);
  const query = `from=${encodeURIComponent(d.from)}&to=${encodeURIComponent(d.to)}`;
  const body = html`<p class="muted">Every payment counted in the period (on time, under, over, late, after a cancel, or a duplicate),
with its KES value when it was counted: M-Pesa at its own amount, USDT at the rate the rates service gave then. KES values are rounded to
the shilling, half to even; the totals are the sums of the file's rows. Days are UTC, both ends included.
The API serves the same file at <code>/v1/reports/payments</code>; the columns are described in docs/reports.md.</p>
<form method="get" action="/dashboard/reports" class="filter" data-testid="report-period">
<label for="from">From</label><input id="from" name="from" type="date" value="${d.from}" required>
<label for="to">To</label><input id="to" name="to" type="date" value="${d.to}" required>
<button type="submit">Show</button>
</form>
<section class="card" aria-labelledby="report-totals-title"><h2 id="report-totals-title">Totals, ${d.from} to ${d.to}</h2>
${totalsTable(totals)}
<p><a class="button" data-testid="report-download" href="/dashboard/reports/payments.csv?${query}" download>Download CSV</a></p>
</section>`;
  return dashboardPage(session, 'reports', 'Reports', body);
}

export function registerReportsPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/reports',
    withSession(deps, async (session, request, reply) => sendPage(reply, 200, await renderReportsPage(deps, session, daysOf(request)))),
  );
  app.get(
    '/reports/payments.csv',
    withSession(deps, async (session, request, reply) => {
      const d = daysOf(request);
      const period = periodOf(session, d);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="payments-${session.auth.environment}-${d.from}-${d.to}.csv"`)
        .send(paymentsReportStream(deps.pool, period, 'csv'));
    }),
  );
}
