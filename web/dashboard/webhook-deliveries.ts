import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { getWebhookEndpoint, listEndpointDeliveries, retryWebhookDelivery } from '../../services/webhooks/endpoints.js';
import { deliveredBodies } from '../../services/webhooks/delivery-log.js';
import type { DeliveryDto, EndpointDto } from '../../services/webhooks/dto.js';
import { AppError } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import { attempt, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, formatTime, formError, notice } from './layout.js';
import type { DashboardSession } from './session.js';
import { endpointActions } from './webhook-endpoint-actions.js';

/** How many recent attempts the page shows (the API's default page of the delivery log). */
const recentDeliveries = 50;

export interface LogState {
  query?: Record<string, unknown>;
  errors?: FormErrors;
}

/** The payload as sent: the same bytes the attempt signed, indented for reading. */
function payloadText(body: string | undefined): string {
  return body ? JSON.stringify(JSON.parse(body), null, 2) : '(the event is no longer stored)';
}

function responseText(d: DeliveryDto): SafeHtml {
  if (d.responseStatus === null) return html`<p class="muted">No response came${d.error ? html`: ${d.error}` : ''}.</p>`;
  if (d.responseBody === null) {
    return html`<p class="muted">HTTP ${d.responseStatus}. The body is not kept: the endpoint is on a private network allowed for test webhooks, whose answers are never stored.</p>`;
  }
  return html`<p class="muted">HTTP ${d.responseStatus}, the first ${d.responseBody.length} characters as stored:</p><pre class="payload" data-testid="response-body" tabindex="0" role="region" aria-label="Response body of attempt ${d.attempt}">${d.responseBody}</pre>`;
}

function deliveryRows(session: DashboardSession, endpoint: EndpointDto, d: DeliveryDto, payload: string | undefined): SafeHtml {
  const retry = can(session, 'developer') && endpoint.status === 'enabled'
    ? html`<form method="post" action="/dashboard/webhooks/${endpoint.id}/deliveries/${d.id}/retry">${csrfField(session)}<button type="submit" class="copy">Retry</button></form>`
    : html``;
  return html`<tr data-delivery="${d.id}" data-event="${d.eventId}">
<td>${formatTime(d.createdAt)}</td><td><code>${d.eventType}</code><br><small>${d.eventId}</small></td><td>${d.attempt}</td>
<td><span class="status ${d.status === 'succeeded' ? 'status-confirmed' : 'status-cancelled'}" data-testid="delivery-status">${d.status}</span></td>
<td data-testid="response-status">${d.responseStatus ?? '—'}</td><td data-testid="latency">${d.latencyMs === null ? '—' : `${d.latencyMs} ms`}</td><td>${d.error ?? ''}</td><td>${retry}</td></tr>
<tr class="delivery-detail" data-detail-of="${d.id}"><td colspan="8"><details><summary>Payload and response</summary>
<div class="delivery-io"><div><h3>Sent</h3><pre class="payload" data-testid="payload" tabindex="0" role="region" aria-label="Payload sent in attempt ${d.attempt}">${payloadText(payload)}</pre></div>
<div><h3>Response</h3>${responseText(d)}</div></div></details></td></tr>`;
}

function bannerFor(query: Record<string, unknown>, deliveries: readonly DeliveryDto[]): SafeHtml {
  const tested = typeof query.tested === 'string' && isId('event', query.tested) ? query.tested : null;
  const retried = typeof query.retried === 'string' && isId('webhookDelivery', query.retried) ? query.retried : null;
  if (query.enabled === '1') return notice('ok', 'The endpoint is enabled: new events go to it again. Retry the deliveries it missed below.');
  if (tested) {
    const first = deliveries.filter((d) => d.eventId === tested).at(-1);
    if (!first) return notice('ok', `Test event ${tested} is on its way; its attempts will appear below.`);
    return first.status === 'succeeded'
      ? notice('ok', `Test event ${tested} delivered: HTTP ${first.responseStatus} in ${first.latencyMs} ms.`)
      : notice('error', `Test event ${tested} failed: ${first.error ?? `HTTP ${first.responseStatus}`}. It is retried on the normal schedule.`);
  }
  if (retried) {
    const d = deliveries.find((x) => x.id === retried);
    if (d?.status === 'succeeded') return notice('ok', `Sent again: attempt ${d.attempt} got HTTP ${d.responseStatus} in ${d.latencyMs} ms.`);
    if (d) return notice('error', `Sent again: attempt ${d.attempt} failed (${d.error ?? `HTTP ${d.responseStatus}`}).`);
  }
  return html``;
}

/** The delivery log of one endpoint of the session's store; another store's endpoint (or a malformed id) is a 404. */
export async function renderDeliveriesPage(deps: ApiDeps, session: DashboardSession, id: string, state: LogState = {}): Promise<string> {
  const endpoint = await getWebhookEndpoint(deps, session.auth, id);
  const deliveries = await listEndpointDeliveries(deps, session.auth, endpoint.id, recentDeliveries);
  const payloads = await deliveredBodies(deps, session.auth, deliveries);
  const body = html`<p><a href="/dashboard/webhooks">← All endpoints</a></p>
${bannerFor(state.query ?? {}, deliveries)}${state.errors ? formError(state.errors) : ''}
<section class="card"><h2><code>${endpoint.url}</code></h2>
<dl class="facts"><dt>Id</dt><dd>${endpoint.id}</dd><dt>Events</dt><dd>${endpoint.enabledEvents.join(', ')}</dd>
<dt>Status</dt><dd><span data-testid="endpoint-status">${endpoint.status}</span>${endpoint.disabledReason ? html` — <span data-testid="disabled-reason">${endpoint.disabledReason}</span>` : ''}</dd></dl>
${can(session, 'developer') ? endpointActions(session, endpoint, { from: 'log' }) : ''}</section>
<section class="card"><h2>Recent deliveries</h2>
${deliveries.length
    ? html`<table class="table" data-testid="deliveries" tabindex="0" aria-label="Deliveries"><thead><tr><th>When</th><th>Event</th><th>Attempt</th><th>Result</th><th>HTTP</th><th>Latency</th><th>Error</th><th></th></tr></thead>
<tbody>${deliveries.map((d) => deliveryRows(session, endpoint, d, payloads.get(d.eventId)))}</tbody></table>`
    : html`<p class="empty">Nothing has been sent to this endpoint yet.</p>`}
</section>`;
  return dashboardPage(session, 'webhooks', 'Webhook deliveries', body);
}

export function registerWebhookDeliveriesPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/webhooks/:id',
    withSession(deps, async (session, request, reply) => {
      const { id } = request.params as { id: string };
      return sendPage(reply, 200, await renderDeliveriesPage(deps, session, id, { query: request.query as Record<string, unknown> }));
    }),
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    withAction(deps, async (session, _form, request, reply) => {
      const { id, deliveryId } = request.params as { id: string; deliveryId: string };
      // The API route's service: one attempt now, answered when it finished (or a 503 when the workers are busy).
      const result = await attempt(() => retryWebhookDelivery(deps, session.auth, id, deliveryId), []);
      if (result.ok) {
        request.log.info({ storeId: session.auth.storeId, endpointId: id, deliveryId: result.value.id }, 'webhook delivery sent again (dashboard)');
        return reply.redirect(`/dashboard/webhooks/${id}?retried=${result.value.id}`, 303);
      }
      // Another store's endpoint or delivery: the same 404 page as the API's 404.
      if (result.status === 404) throw new AppError('not_found', result.errors.form ?? 'No such delivery.');
      return sendPage(reply, result.status, await renderDeliveriesPage(deps, session, id, { errors: result.errors }));
    }),
  );
}
