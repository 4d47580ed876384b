import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { createWebhookEndpoint } from '../../api/routes/webhook-endpoints/create.js';
import { listWebhookEndpoints, registerWebhookEndpoint } from '../../services/webhooks/endpoints.js';
import { listOpenExhaustedDeliveries } from '../../services/webhooks/exhausted-deliveries.js';
import type { DeliveryExhaustedData } from '../../domain/webhooks/endpoint-notices.js';
import type { EndpointDto } from '../../services/webhooks/dto.js';
import { webhookEventTypes } from '../../domain/webhooks/event-types.js';
import { isId } from '../../domain/ids.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import { attempt, noErrors, optionalText, parseApiBody, type Form, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, fieldError, formatTime, formError, notice } from './layout.js';
import type { DashboardSession } from './session.js';
import { endpointActions } from './webhook-endpoint-actions.js';

const createFields = ['url', 'enabledEvents'];

/** The API route's own service, checked with the route's body schema: one implementation of both. */
async function createEndpoint(deps: ApiDeps, auth: AuthContext, form: Form) {
  const body = parseApiBody(createWebhookEndpoint.body!, { url: optionalText(form, 'url'), enabledEvents: form.getAll('enabledEvents') });
  return registerWebhookEndpoint(deps, { storeId: auth.storeId, environment: auth.environment }, body);
}

function eventChoices(picked: readonly string[], errors: FormErrors): SafeHtml {
  return html`<fieldset class="field"><legend>Events</legend><div class="choices">${webhookEventTypes.map(
    (t) => html`<label class="choice"><input type="checkbox" name="enabledEvents" value="${t}"${picked.includes(t) ? html` checked` : ''}> <code>${t}</code></label>`,
  )}</div>${fieldError(errors, 'enabledEvents')}</fieldset>`;
}

function secretBox(created: { id: string; secret: string }): SafeHtml {
  return html`<div class="notice ok secret" role="status">
<p><strong>Endpoint ${created.id} created.</strong> Copy its signing secret now: it is shown only this once.</p>
<p class="address"><code data-testid="webhook-secret">${created.secret}</code>
<button type="button" class="copy" data-copy="${created.secret}">Copy</button></p>
<p class="muted">Verify each delivery with it (Standard Webhooks). If you lose it, roll a new one below.</p>
</div>`;
}

export interface ListState {
  form?: { url?: string; events: readonly string[]; errors: FormErrors };
  banner?: SafeHtml;
  /** An action on one endpoint that failed: its message goes in that endpoint's row. */
  rowErrors?: { endpointId: string; errors: FormErrors };
}

function endpointRow(session: DashboardSession, e: EndpointDto, errors: FormErrors): SafeHtml {
  return html`<tr data-endpoint="${e.id}"><td><code>${e.url}</code><br><small>${e.id}</small></td>
<td>${e.enabledEvents.join(', ')}</td>
<td><span class="status ${e.status === 'enabled' ? 'status-confirmed' : 'status-cancelled'}" data-testid="endpoint-status">${e.status}</span>${
    e.disabledReason ? html`<br><small data-testid="disabled-reason">${e.disabledReason}</small>` : ''
  }</td>
<td>${formatTime(e.createdAt)}</td>
<td class="endpoint-actions"><a href="/dashboard/webhooks/${e.id}">Deliveries</a>${
    can(session, 'developer') ? endpointActions(session, e, { roll: true, remove: true }) : ''
  }${formError(errors)}</td></tr>`;
}

/**
 * Deliveries that ran out of attempts and have not got through since, each with "Send again" (the
 * delivery log's retry of its last attempt) while its endpoint is enabled.
 */
function exhaustedNotice(session: DashboardSession, items: readonly DeliveryExhaustedData[], endpoints: readonly EndpointDto[]): SafeHtml {
  if (items.length === 0) return html``;
  const enabled = new Set(endpoints.filter((e) => e.status === 'enabled').map((e) => e.id));
  const action = (x: DeliveryExhaustedData) => {
    if (!can(session, 'developer') || !x.lastDeliveryId) return html``;
    if (!enabled.has(x.endpointId)) return html`<small class="muted">Enable the endpoint to send it again.</small>`;
    return html`<form method="post" action="/dashboard/webhooks/${x.endpointId}/deliveries/${x.lastDeliveryId}/retry">${csrfField(session)}<button type="submit" class="copy">Send again</button></form>`;
  };
  const rows = items.map((x) => html`<tr data-exhausted="${x.eventId}"><td><code>${x.eventType}</code><br><small>${x.eventId}</small></td>
<td><a href="/dashboard/webhooks/${x.endpointId}"><code>${x.url}</code></a></td><td>${x.attempts}</td><td>${x.lastError ?? ''}</td>
<td>${x.lastAttemptAt ? formatTime(x.lastAttemptAt) : ''}</td><td>${action(x)}</td></tr>`);
  return html`<section class="notice error" role="alert" data-testid="exhausted-deliveries"><p><strong>${items.length === 1 ? 'A delivery' : `${items.length} deliveries`} ran out of attempts.</strong>
The event did not reach the endpoint in about three days of retries; send it again once the endpoint answers 2xx.</p>
<table class="table" aria-label="Deliveries that ran out of attempts"><thead><tr><th>Event</th><th>Endpoint</th><th>Attempts</th><th>Last error</th><th>Last attempt</th><th></th></tr></thead>
<tbody>${rows}</tbody></table></section>`;
}

export async function renderWebhooksPage(deps: ApiDeps, session: DashboardSession, state: ListState = {}): Promise<string> {
  const endpoints = await listWebhookEndpoints(deps, session.auth);
  const exhausted = await listOpenExhaustedDeliveries(deps, session.auth);
  const form = state.form ?? { events: webhookEventTypes, errors: noErrors };
  const errorsOf = (id: string) => (state.rowErrors?.endpointId === id ? state.rowErrors.errors : noErrors);
  // An error about an endpoint the list does not show (deleted meanwhile, another store's) goes on top.
  const orphan = state.rowErrors && !endpoints.some((e) => e.id === state.rowErrors!.endpointId) ? formError(state.rowErrors.errors) : '';
  const list = endpoints.length
    ? html`<table class="table" data-testid="endpoints" tabindex="0" aria-label="Webhook endpoints"><thead><tr><th>URL</th><th>Events</th><th>Status</th><th>Created</th><th></th></tr></thead>
<tbody>${endpoints.map((e) => endpointRow(session, e, errorsOf(e.id)))}</tbody></table>`
    : html`<p class="empty">No webhook endpoints yet.</p>`;
  const create = can(session, 'developer')
    ? html`<section class="card" aria-labelledby="new-endpoint"><h2 id="new-endpoint">Add an endpoint</h2>
${formError(form.errors)}
<form method="post" action="/dashboard/webhooks" novalidate>
${csrfField(session)}
${field({ name: 'url', label: 'URL', type: 'url', value: form.url, errors: form.errors, required: true, placeholder: 'https://shop.example/malipo-webhooks', hint: session.auth.environment === 'live' ? 'https, on a public address' : 'https (http is allowed in test)' })}
${eventChoices(form.events, form.errors)}
<button type="submit" class="primary">Add endpoint</button>
</form></section>`
    : html``;
  const body = html`${state.banner ?? ''}${orphan}${exhaustedNotice(session, exhausted, endpoints)}
<p class="muted">Malipo signs every delivery (Standard Webhooks) and retries for about three days until your server answers 2xx.
<em>Send test event</em> delivers a <code>webhook_endpoint.tested</code> event to that endpoint only, the same way.</p>
<section class="card"><h2>Endpoints</h2>${list}</section>
${create}`;
  return dashboardPage(session, 'webhooks', 'Webhooks', body);
}

function bannerFor(query: Record<string, unknown>): SafeHtml {
  const id = (name: string) => (typeof query[name] === 'string' && isId('webhookEndpoint', query[name]) ? query[name] : null);
  const enabled = id('enabled');
  const deleted = id('deleted');
  if (enabled) return notice('ok', `Endpoint ${enabled} is enabled: new events go to it again. Send the events it missed again from its delivery log.`);
  if (deleted) return notice('ok', `Endpoint ${deleted} is deleted: deliveries in progress stop at their next attempt.`);
  return html``;
}

export function registerWebhooksPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/webhooks',
    withSession(deps, async (session, request, reply) =>
      sendPage(reply, 200, await renderWebhooksPage(deps, session, { banner: bannerFor(request.query as Record<string, unknown>) })),
    ),
  );

  app.post(
    '/webhooks',
    withAction(deps, async (session, form, _request, reply) => {
      const result = await attempt(() => createEndpoint(deps, session.auth, form), createFields);
      // No redirect here: the secret exists only in this answer, which is never cached (no-store).
      if (result.ok) return sendPage(reply, 201, await renderWebhooksPage(deps, session, { banner: secretBox(result.value) }));
      const values = { url: form.get('url') ?? '', events: form.getAll('enabledEvents') };
      return sendPage(reply, result.status, await renderWebhooksPage(deps, session, { form: { ...values, errors: result.errors } }));
    }),
  );
}
