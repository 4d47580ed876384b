import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { getWebhookEndpoint, listEndpointDeliveries } from '../../services/webhooks/endpoints.js';
import { sendPage, withSession } from './handlers.js';
import { html } from './html.js';
import { dashboardPage, formatTime } from './layout.js';

/** How many recent attempts the page shows (the API's default page of the delivery log). */
const recentDeliveries = 50;

export function registerWebhookDeliveriesPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/webhooks/:id',
    withSession(deps, async (session, request, reply) => {
      const { id } = request.params as { id: string };
      // Another store's endpoint, or a malformed id, is "not found" exactly as in the API.
      const endpoint = await getWebhookEndpoint(deps, session.auth, id);
      const deliveries = await listEndpointDeliveries(deps, session.auth, endpoint.id, recentDeliveries);
      const rows = deliveries.map(
        (d) => html`<tr data-delivery="${d.id}">
<td>${formatTime(d.createdAt)}</td><td><code>${d.eventType}</code><br><small>${d.eventId}</small></td><td>${d.attempt}</td>
<td><span class="status ${d.status === 'succeeded' ? 'status-confirmed' : 'status-cancelled'}">${d.status}</span></td>
<td>${d.responseStatus ?? '—'}</td><td>${d.latencyMs === null ? '—' : `${d.latencyMs} ms`}</td><td>${d.error ?? ''}</td></tr>`,
      );
      const body = html`<p><a href="/dashboard/webhooks">← All endpoints</a></p>
<section class="card"><h2><code>${endpoint.url}</code></h2>
<dl class="facts"><dt>Id</dt><dd>${endpoint.id}</dd><dt>Events</dt><dd>${endpoint.enabledEvents.join(', ')}</dd>
<dt>Status</dt><dd>${endpoint.status}${endpoint.disabledReason ? html` — <span data-testid="disabled-reason">${endpoint.disabledReason}</span>` : ''}</dd></dl></section>
<section class="card"><h2>Recent deliveries</h2>
${deliveries.length
    ? html`<table class="table" data-testid="deliveries"><thead><tr><th>When</th><th>Event</th><th>Attempt</th><th>Result</th><th>HTTP</th><th>Latency</th><th>Error</th></tr></thead><tbody>${rows}</tbody></table>`
    : html`<p class="empty">Nothing has been sent to this endpoint yet.</p>`}
</section>`;
      return sendPage(reply, 200, dashboardPage(session, 'webhooks', 'Webhook deliveries', body));
    }),
  );
}
