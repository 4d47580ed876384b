import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { deleteWebhookEndpoint, enableWebhookEndpoint, rollWebhookSecret } from '../../services/webhooks/endpoints.js';
import { sendTestEvent, testEventIdFor } from '../../services/webhooks/test-event.js';
import { randomToken } from '../../domain/ids.js';
import { attempt, type Form, type FormErrors } from './forms.js';
import { sendPage, withAction } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import type { DashboardSession } from './session.js';
import { renderWebhooksPage } from './webhooks.js';
import { renderDeliveriesPage } from './webhook-deliveries.js';

function rolledBox(rolled: { id: string; secret: string; previousSecretExpiresAt: string }): SafeHtml {
  const until = `${rolled.previousSecretExpiresAt.slice(0, 10)} ${rolled.previousSecretExpiresAt.slice(11, 19)} UTC`;
  return html`<div class="notice ok secret" role="status">
<p><strong>New signing secret for ${rolled.id}.</strong> Copy it now: it is shown only this once.</p>
<p class="address"><code data-testid="webhook-secret">${rolled.secret}</code>
<button type="button" class="copy" data-copy="${rolled.secret}">Copy</button></p>
<p>Until ${until} every delivery is signed with both the new and the old secret, so your server keeps verifying while you deploy the new one. After that, only the new one signs.</p>
</div>`;
}

const idOf = (params: unknown): string => (params as { id: string }).id;

/** A failed action: the page it came from, with the message by the endpoint (or on top), with the error's status. */
async function refused(deps: ApiDeps, session: DashboardSession, reply: FastifyReply, form: Form, endpointId: string, r: { status: number; errors: FormErrors }) {
  if (form.get('from') === 'log' && r.status !== 404) {
    return sendPage(reply, r.status, await renderDeliveriesPage(deps, session, endpointId, { errors: r.errors }));
  }
  return sendPage(reply, r.status, await renderWebhooksPage(deps, session, { rowErrors: { endpointId, errors: r.errors } }));
}

export function registerWebhookActions(app: FastifyInstance, deps: ApiDeps): void {
  app.post(
    '/webhooks/:id/enable',
    withAction(deps, async (session, form, request, reply) => {
      const id = idOf(request.params);
      const result = await attempt(() => enableWebhookEndpoint(deps, session.auth, id), []);
      if (!result.ok) return refused(deps, session, reply, form, id, result);
      return reply.redirect(form.get('from') === 'log' ? `/dashboard/webhooks/${result.value.id}?enabled=1` : `/dashboard/webhooks?enabled=${result.value.id}`, 303);
    }),
  );

  app.post(
    '/webhooks/:id/test',
    withAction(deps, async (session, form, request, reply) => {
      const id = idOf(request.params);
      const nonce = /^[0-9a-z]{24}$/.test(form.get('nonce') ?? '') ? form.get('nonce')! : randomToken(24);
      const result = await attempt(() => sendTestEvent(deps, session.auth, id, testEventIdFor(session.auth, id, nonce)), []);
      if (!result.ok) return refused(deps, session, reply, form, id, result);
      request.log.info({ storeId: session.auth.storeId, endpointId: id, eventId: result.value.event.id }, 'webhook test event sent (dashboard)');
      return reply.redirect(`/dashboard/webhooks/${id}?tested=${result.value.event.id}`, 303);
    }),
  );

  app.post(
    '/webhooks/:id/roll-secret',
    withAction(deps, async (session, form, request, reply) => {
      const id = idOf(request.params);
      const result = await attempt(() => rollWebhookSecret(deps, session.auth, id), []);
      if (!result.ok) return refused(deps, session, reply, form, id, result);
      request.log.info({ storeId: session.auth.storeId, endpointId: id }, 'webhook secret rolled (dashboard)');
      // No redirect: the secret exists only in this answer, which is never cached (no-store).
      return sendPage(reply, 200, await renderWebhooksPage(deps, session, { banner: rolledBox(result.value) }));
    }),
  );

  app.post(
    '/webhooks/:id/delete',
    withAction(deps, async (session, form, request, reply) => {
      const id = idOf(request.params);
      const result = await attempt(() => deleteWebhookEndpoint(deps, session.auth, id), []);
      if (!result.ok) return refused(deps, session, reply, form, id, result);
      request.log.info({ storeId: session.auth.storeId, endpointId: id }, 'webhook endpoint deleted (dashboard)');
      return reply.redirect(`/dashboard/webhooks?deleted=${result.value.id}`, 303);
    }),
  );
}
