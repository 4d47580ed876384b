import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import type { ApiKeyDto } from '../../services/keys/dto.js';
import { createKeyBody, revokeKeyBody, rollKeyBody } from '../../api/routes/keys/schemas.js';
import { createApiKey, listApiKeys, revokeApiKey, rollApiKey, type CreatedApiKey, type RolledApiKey } from '../../services/keys/api-keys.js';
import { defaultRollGraceHours, maxRollGraceHours } from '../../domain/api-keys.js';
import { isId } from '../../domain/ids.js';
import { attempt, noErrors, optionalNumber, optionalText, parseApiBody, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, fieldError, formatTime, formError, notice } from './layout.js';
import type { DashboardSession } from './session.js';

/**
 * The API keys page: the same services as `/v1/keys` (list, create, roll, revoke), checked with
 * the routes' body schemas. A new key appears once, in the answer to the form that made it
 * (never a redirect target, never cached). Developers and owners change keys; viewers see the list.
 */
const createFields = ['kind', 'name'];

interface PageState {
  banner?: SafeHtml;
  createErrors?: FormErrors;
  rowErrors?: { keyId: string; errors: FormErrors };
}

const shown = (k: ApiKeyDto): string => `${k.prefix}…${k.last4}`;
const exactTime = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

function statusCell(k: ApiKeyDto): SafeHtml {
  const css = { active: 'status-confirmed', expiring: 'status-pending', expired: 'status-cancelled', revoked: 'status-cancelled' }[k.status];
  const detail =
    k.status === 'expiring' ? `works until ${exactTime(k.expiresAt!)}`
    : k.status === 'expired' ? `since ${exactTime(k.expiresAt!)}`
    : k.status === 'revoked' ? `at ${exactTime(k.revokedAt!)}`
    : '';
  return html`<span class="status ${css}">${k.status}</span>${detail ? html`<br><small>${detail}</small>` : ''}${
    k.replacedBy ? html`<br><small>replaced by ${k.replacedBy}</small>` : ''
  }`;
}

function actions(session: DashboardSession, k: ApiKeyDto, errors: FormErrors): SafeHtml {
  if (k.status === 'revoked' || k.status === 'expired' || !can(session, 'developer')) return html``;
  const question = `Revoke ${shown(k)}? It stops working at once, everywhere.`;
  const roll =
    k.status === 'active'
      ? html`<form method="post" action="/dashboard/keys/${k.id}/roll" novalidate>
${csrfField(session)}
<label for="grace-${k.id}">Grace (hours)</label>
<input id="grace-${k.id}" name="graceHours" type="number" min="0" max="${maxRollGraceHours}" step="any" value="${defaultRollGraceHours}"${
          errors.fields.graceHours ? html` aria-invalid="true" aria-describedby="f-graceHours-error"` : ''
        }>
<button type="submit" class="copy">Roll</button>
${fieldError(errors, 'graceHours')}
</form>`
      : html``;
  return html`${formError(errors)}${roll}<form method="post" action="/dashboard/keys/${k.id}/revoke" data-confirm="${question}">
${csrfField(session)}
<button type="submit" class="danger">Revoke</button>
</form>`;
}

function keyRow(session: DashboardSession, k: ApiKeyDto, errors: FormErrors): SafeHtml {
  return html`<tr data-key="${k.id}" data-kind="${k.kind}">
<td><code>${k.publishableKey ?? shown(k)}</code>${
    k.publishableKey ? html` <button type="button" class="copy" data-copy="${k.publishableKey}">Copy</button>` : ''
  }<br><small>${k.kind} · ${k.id}</small></td>
<td>${k.name ?? '—'}</td>
<td>${statusCell(k)}</td>
<td>${formatTime(k.createdAt)}</td>
<td>${formatTime(k.lastUsedAt)}</td>
<td class="key-actions">${actions(session, k, errors)}</td>
</tr>`;
}

function newKeyBox(created: CreatedApiKey | RolledApiKey): SafeHtml {
  const previous = 'previousKey' in created ? created.previousKey : null;
  const once = created.kind === 'secret'
    ? html`Copy it now: it is shown only this once.`
    : html`It is public: put it in your checkout pages. This page lists it again later.`;
  return html`<div class="notice ok secret" role="status">
<p><strong>New ${created.kind} key ${created.id}${created.name ? ` (${created.name})` : ''}.</strong> ${once}</p>
<p class="address"><code data-testid="new-key">${created.key}</code>
<button type="button" class="copy" data-copy="${created.key}">Copy</button></p>
${previous
    ? html`<p>${previous.status === 'expiring'
      ? `The old key ${shown(previous)} keeps working until ${exactTime(previous.expiresAt!)}: deploy the new one before then.`
      : `The old key ${shown(previous)} stopped working at once.`}</p>`
    : ''}
</div>`;
}

async function render(deps: ApiDeps, session: DashboardSession, state: PageState): Promise<string> {
  const { data } = await listApiKeys(deps, session.auth);
  const createErrors = state.createErrors ?? noErrors;
  const errorsOf = (id: string) => (state.rowErrors?.keyId === id ? state.rowErrors.errors : noErrors);
  // An error about a key the list does not show (another store's, a made-up id) goes on top.
  const orphan = state.rowErrors && !data.some((k) => k.id === state.rowErrors!.keyId) ? formError(state.rowErrors.errors) : '';
  const body = html`${state.banner ?? ''}${orphan}
<p class="muted">Roll a key to replace it without an outage: the old key keeps working for the grace period you choose
(${defaultRollGraceHours} hours unless you say otherwise, at most ${maxRollGraceHours}), then it is refused. Revoke a key to stop it at once,
on every server. The API does the same at <code>/v1/keys</code>.</p>
<section class="card"><h2>Keys</h2>
<table class="table" data-testid="keys" tabindex="0" aria-label="API keys"><thead><tr><th>Key</th><th>Name</th><th>Status</th><th>Created</th><th>Last used</th><th></th></tr></thead>
<tbody>${data.map((k) => keyRow(session, k, errorsOf(k.id)))}</tbody></table>
</section>
${can(session, 'developer') ? html`<section class="card" aria-labelledby="new-key-title"><h2 id="new-key-title">Create a key</h2>
${formError(createErrors)}
<form method="post" action="/dashboard/keys" novalidate>
${csrfField(session)}
<div class="field"><label for="f-kind">Kind</label>
<select id="f-kind" name="kind"><option value="secret">Secret (server to server)</option><option value="publishable">Publishable (checkout pages)</option></select>
${fieldError(createErrors, 'kind')}</div>
${field({ name: 'name', label: 'Name (optional)', errors: createErrors, placeholder: 'checkout server', hint: 'To tell keys apart; 1 to 100 characters' })}
<button type="submit" class="primary">Create key</button>
</form></section>` : ''}`;
  return dashboardPage(session, 'keys', 'API keys', body);
}

function bannerFor(query: Record<string, unknown>): SafeHtml {
  const revoked = typeof query.revoked === 'string' && isId('apiKey', query.revoked) ? query.revoked : null;
  return revoked ? notice('ok', `Key ${revoked} is revoked: it is refused from now on.`) : html``;
}

export function registerKeysPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/keys',
    withSession(deps, async (session, request, reply) =>
      sendPage(reply, 200, await render(deps, session, { banner: bannerFor(request.query as Record<string, unknown>) }))),
  );

  app.post(
    '/keys',
    withAction(deps, async (session, form, request, reply) => {
      const result = await attempt(() => {
        const body = parseApiBody(createKeyBody, { kind: optionalText(form, 'kind'), name: optionalText(form, 'name') });
        return createApiKey(deps, session.auth, body);
      }, createFields);
      // No redirect: the key exists only in this answer, which is never cached (no-store).
      if (result.ok) {
        request.log.info({ storeId: session.auth.storeId, keyId: result.value.id, by: session.user.id }, 'api key created (dashboard)');
        return sendPage(reply, 201, await render(deps, session, { banner: newKeyBox(result.value) }));
      }
      return sendPage(reply, result.status, await render(deps, session, { createErrors: result.errors }));
    }),
  );

  app.post(
    '/keys/:id/roll',
    withAction(deps, async (session, form, request, reply) => {
      const { id } = request.params as { id: string };
      const result = await attempt(() => {
        const body = parseApiBody(rollKeyBody, { graceHours: optionalNumber(form, 'graceHours') });
        return rollApiKey(deps, session.auth, id, body.graceHours);
      }, ['graceHours']);
      if (result.ok) {
        request.log.info({ storeId: session.auth.storeId, keyId: id, replacedBy: result.value.id, by: session.user.id }, 'api key rolled (dashboard)');
        return sendPage(reply, 200, await render(deps, session, { banner: newKeyBox(result.value) }));
      }
      return sendPage(reply, result.status, await render(deps, session, { rowErrors: { keyId: id, errors: result.errors } }));
    }),
  );

  app.post(
    '/keys/:id/revoke',
    withAction(deps, async (session, form, request, reply) => {
      const { id } = request.params as { id: string };
      const result = await attempt(() => {
        const body = parseApiBody(revokeKeyBody, { confirmSelfRevoke: form.get('confirmSelfRevoke') === 'true' ? true : undefined });
        return revokeApiKey(deps, session.auth, id, { confirmSelfRevoke: body.confirmSelfRevoke });
      }, []);
      if (!result.ok) return sendPage(reply, result.status, await render(deps, session, { rowErrors: { keyId: id, errors: result.errors } }));
      request.log.info({ storeId: session.auth.storeId, keyId: result.value.id, by: session.user.id }, 'api key revoked (dashboard)');
      return reply.redirect(`/dashboard/keys?revoked=${result.value.id}`, 303);
    }),
  );
}
