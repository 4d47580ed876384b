import type { FastifyInstance } from 'fastify';
import { connectMobileMoney } from '../../services/mpesa/connect.js';
import type { ApiDeps } from '../../api/deps.js';
import { limitOf } from '../../api/plugins/rate-limit.js';
import { connectMobileMoneyRoute } from '../../api/routes/mobile-money/connect.js';
import { findMobileMoneyConnection } from '../../services/mpesa/connection.js';
import { darajaEnvironmentFor } from '../../rails/mpesa/merchant.js';
import { attempt, noErrors, optionalText, parseApiBody, type Form, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, fieldError, formatTime, formError, notice } from './layout.js';
import type { DashboardSession } from './session.js';

/** The spec's five inputs, then the optional till details the API also accepts. */
const connectFields = ['consumerKey', 'consumerSecret', 'shortcode', 'passkey', 'environment', 'shortcodeType', 'storeNumber'];

/** Only what identifies the shortcode is ever shown again; the three credentials never are. */
interface ShownValues {
  shortcode?: string;
  environment?: string;
  shortcodeType?: string;
  storeNumber?: string;
}

function select(name: string, label: string, options: [string, string][], chosen: string | undefined, errors: FormErrors): SafeHtml {
  return html`<div class="field">
  <label for="f-${name}">${label}</label>
  <select id="f-${name}" name="${name}"${errors.fields[name] ? html` aria-invalid="true"` : ''}>${options.map(
    ([value, text]) => html`<option value="${value}"${value === chosen ? html` selected` : ''}>${text}</option>`,
  )}</select>
  ${fieldError(errors, name)}
</div>`;
}

async function render(deps: ApiDeps, session: DashboardSession, values: ShownValues, errors: FormErrors, banner: SafeHtml): Promise<string> {
  const { auth } = session;
  const expected = darajaEnvironmentFor(auth.environment);
  const connection = await findMobileMoneyConnection(deps, auth);
  const current = connection
    ? html`<dl class="facts" data-testid="mpesa-connection">
<dt>Shortcode</dt><dd data-testid="mpesa-shortcode">${connection.shortcode}</dd>
<dt>Type</dt><dd>${connection.shortcodeType === 'till' ? `Till (store number ${connection.storeNumber ?? ''})` : 'Paybill'}</dd>
<dt>Environment</dt><dd data-testid="mpesa-environment">${expected}</dd>
<dt>Connected</dt><dd>${formatTime(connection.connectedAt)}</dd>
<dt>Paybill payments from the M-Pesa menu</dt><dd data-testid="mpesa-c2b">${
      connection.c2b.error
        ? html`<span class="field-error" role="alert" data-testid="mpesa-c2b-error">Confirmation URLs not registered with M-Pesa: ${connection.c2b.error}</span>${
            connection.c2b.registeredAt ? html` (the URLs registered ${formatTime(connection.c2b.registeredAt)} still work)` : ''}`
        : html`URLs registered (${connection.c2b.apiVersion ?? ''}) ${formatTime(connection.c2b.registeredAt ?? '')}`
    }</dd>
</dl>
<p class="muted">The consumer key, consumer secret and passkey are stored encrypted and are never shown again.</p>`
    : html`<p class="empty" data-testid="mpesa-connection">No M-Pesa shortcode is connected in the ${auth.environment} environment yet.</p>`;
  const body = html`${banner}
<section class="card"><h2>Connected shortcode</h2>${current}</section>
${can(session, 'owner') ? html`<section class="card" aria-labelledby="connect">
<h2 id="connect">${connection ? 'Replace the connection' : 'Connect M-Pesa'}</h2>
<p class="muted">Malipo checks the credentials with M-Pesa before saving them; nothing is saved if M-Pesa refuses them.
Use the Daraja app of your ${expected === 'sandbox' ? 'sandbox (this is a test session)' : 'live shortcode'}.</p>
${formError(errors)}
<form method="post" action="/dashboard/mobile-money" novalidate>
${csrfField(session)}
<div class="grid">
${field({ name: 'consumerKey', label: 'Consumer key', type: 'password', secret: true, required: true, errors })}
${field({ name: 'consumerSecret', label: 'Consumer secret', type: 'password', secret: true, required: true, errors })}
${field({ name: 'shortcode', label: 'Shortcode', value: values.shortcode, required: true, errors, hint: 'Paybill number, or the till number for a till' })}
${field({ name: 'passkey', label: 'Passkey', type: 'password', secret: true, required: true, errors, hint: 'The Lipa na M-Pesa Online passkey' })}
${select('environment', 'Environment', [['sandbox', 'Sandbox'], ['live', 'Live']], values.environment ?? expected, errors)}
${select('shortcodeType', 'Shortcode type', [['paybill', 'Paybill'], ['till', 'Till (Buy Goods)']], values.shortcodeType ?? 'paybill', errors)}
${field({ name: 'storeNumber', label: 'Store number (tills only)', value: values.storeNumber, errors, hint: 'The head-office number the till belongs to' })}
</div>
<button type="submit" class="primary">Check and connect</button>
</form>
</section>` : html`<p class="muted">Only an owner can connect or change where M-Pesa payments go.</p>`}`;
  return dashboardPage(session, 'mobile-money', 'Mobile money', body);
}

function connectBody(form: Form): Record<string, unknown> {
  return Object.fromEntries(connectFields.map((name) => [name, optionalText(form, name)]));
}

export function registerMobileMoneyPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/mobile-money',
    withSession(deps, async (session, request, reply) => {
      const connected = (request.query as Record<string, unknown>).connected === '1';
      const banner = connected ? notice('ok', 'M-Pesa accepted the credentials: the shortcode is connected.') : html``;
      return sendPage(reply, 200, await render(deps, session, {}, noErrors, banner));
    }),
  );

  app.post(
    '/mobile-money',
    withAction(deps, async (session, form, request, reply) => {
      const result = await attempt(async () => {
        // Each attempt calls the operator twice: the API's limit for this operation applies here too.
        const { operationId, rateLimitPerMinute } = connectMobileMoneyRoute;
        await limitOf(app, operationId, rateLimitPerMinute!)(request, reply);
        const body = parseApiBody(connectMobileMoneyRoute.body!, connectBody(form));
        return connectMobileMoney(deps, session.auth, body);
      }, connectFields);
      if (result.ok) return reply.redirect('/dashboard/mobile-money?connected=1', 303);
      if (result.headers) reply.headers(result.headers);
      const shown = { shortcode: form.get('shortcode') ?? '', environment: form.get('environment') ?? undefined, shortcodeType: form.get('shortcodeType') ?? undefined, storeNumber: form.get('storeNumber') ?? '' };
      return sendPage(reply, result.status, await render(deps, session, shown, result.errors, html``));
    }, { role: 'owner' }),
  );
}
