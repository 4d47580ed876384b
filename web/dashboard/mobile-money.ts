import type { FastifyInstance } from 'fastify';
import { connectMobileMoney } from '../../services/mpesa/connect.js';
import type { ApiDeps } from '../../api/deps.js';
import { limitOf } from '../../api/plugins/rate-limit.js';
import { connectMobileMoneyRoute } from '../../api/routes/mobile-money/connect.js';
import { findMobileMoneyConnection } from '../../services/mpesa/connection.js';
import { assignUnallocatedPayment, listUnallocatedPayments, markUnallocatedForRefund } from '../../services/mpesa/unallocated.js';
import { darajaEnvironmentFor } from '../../rails/mpesa/merchant.js';
import { attempt, noErrors, optionalText, parseApiBody, type Form, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, fieldError, formatTime, formError, notice } from './layout.js';
import type { DashboardSession } from './session.js';

/** The spec's five inputs, then the optional till details, C2B policy and Pull registration the API also accepts. */
const connectFields = [
  'consumerKey', 'consumerSecret', 'shortcode', 'passkey', 'environment', 'shortcodeType', 'storeNumber',
  'c2bSettlesAlone', 'c2bUnallocatedAllowed', 'c2bPullNominatedNumber',
];
/** The policy selects post "true" or "false"; the API takes booleans. */
const booleanFields = ['c2bSettlesAlone', 'c2bUnallocatedAllowed'];

/** Only what identifies the shortcode is ever shown again; the three credentials never are. */
interface ShownValues {
  shortcode?: string;
  environment?: string;
  shortcodeType?: string;
  storeNumber?: string;
  c2bSettlesAlone?: string;
  c2bUnallocatedAllowed?: string;
  c2bPullNominatedNumber?: string;
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
<dt>Paybill and till payments from the M-Pesa menu</dt><dd data-testid="mpesa-c2b">${
      connection.c2b.error
        ? html`<span class="field-error" role="alert" data-testid="mpesa-c2b-error">Confirmation URLs not registered with M-Pesa: ${connection.c2b.error}</span>${
            connection.c2b.registeredAt ? html` (the URLs registered ${formatTime(connection.c2b.registeredAt)} still work)` : ''}`
        : html`URLs registered (${connection.c2b.apiVersion ?? ''}) ${formatTime(connection.c2b.registeredAt ?? '')}`
    }</dd>
<dt>Pull Transactions (backfill)</dt><dd data-testid="mpesa-pull">${pullState(connection.pull)}</dd>
<dt>Confirmations</dt><dd data-testid="mpesa-settles-alone">${
      connection.c2bPolicy.settlesAlone ? 'settle a link by themselves' : 'wait until Pull Transactions corroborates them'}</dd>
<dt>Account numbers that match no open link</dt><dd data-testid="mpesa-unallocated-allowed">${
      connection.c2bPolicy.unallocatedAllowed ? 'accepted at validation, kept as unallocated' : 'refused at validation (where M-Pesa asks)'}</dd>
</dl>
<p class="muted">The consumer key, consumer secret and passkey are stored encrypted and are never shown again.</p>`
    : html`<p class="empty" data-testid="mpesa-connection">No M-Pesa shortcode is connected in the ${auth.environment} environment yet.</p>`;
  const body = html`${banner}
<section class="card"><h2>Connected shortcode</h2>${current}</section>
${connection ? await unallocatedSection(deps, session) : ''}
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
${select('c2bSettlesAlone', 'Menu payment confirmations', [['true', 'Settle a link by themselves'], ['false', 'Wait for Pull Transactions to corroborate them']],
    values.c2bSettlesAlone ?? String(connection?.c2bPolicy.settlesAlone ?? true), errors)}
${select('c2bUnallocatedAllowed', 'Account numbers that match no open link', [['false', 'Refuse them at validation'], ['true', 'Accept them (kept as unallocated)']],
    values.c2bUnallocatedAllowed ?? String(connection?.c2bPolicy.unallocatedAllowed ?? false), errors)}
${field({ name: 'c2bPullNominatedNumber', label: 'Pull Transactions nominated number (optional)', value: values.c2bPullNominatedNumber, errors,
    hint: 'A Safaricom number of the business (2547XXXXXXXX): registers the shortcode for Pull Transactions, which finds payments whose confirmation never arrived' })}
</div>
<button type="submit" class="primary">Check and connect</button>
</form>
</section>` : html`<p class="muted">Only an owner can connect or change where M-Pesa payments go.</p>`}`;
  return dashboardPage(session, 'mobile-money', 'Mobile money', body);
}

/** The Pull Transactions registration beside the C2B URLs': registered, refused (with Daraja's words), or never asked. */
function pullState(pull: { registeredAt: string | null; error: string | null; pulledAt: string | null }): SafeHtml {
  if (pull.error) {
    return html`<span class="field-error" role="alert" data-testid="mpesa-pull-error">Not registered for Pull Transactions: ${pull.error}</span>${
      pull.registeredAt ? html` (the registration of ${formatTime(pull.registeredAt)} still stands)` : ''}`;
  }
  if (pull.registeredAt) return html`Registered ${formatTime(pull.registeredAt)}; last pulled ${pull.pulledAt ? formatTime(pull.pulledAt) : 'not yet'}`;
  return html`Not registered: connect with a nominated number to have missed confirmations found`;
}

/**
 * Paybill and till payments that matched no link (by account number, or a till's by amount): listed with what Daraja sent,
 * and assignable to a link by an owner or developer (recorded as `user:<id>`).
 */
async function unallocatedSection(deps: ApiDeps, session: DashboardSession): Promise<SafeHtml> {
  const { data, total } = await listUnallocatedPayments(deps, session.auth, { limit: 50, page: 1 });
  const rows = data.map(
    (p) => html`<tr data-testid="unallocated-${p.transId}"><td>${p.transId}</td><td>KES ${p.amount}</td><td>${p.billRefNumber ?? ''}</td>
<td>${p.payerName ?? ''} ${p.msisdn ?? ''}</td><td>${formatTime(p.receivedAt)}</td><td>${
      can(session, 'developer')
        ? html`<form method="post" action="/dashboard/mobile-money/unallocated/${p.transId}/assign" class="inline">${csrfField(session)}
<input name="linkId" placeholder="pl_…" aria-label="Link to assign ${p.transId} to" required> <button type="submit">Assign</button></form>
<form method="post" action="/dashboard/mobile-money/unallocated/${p.transId}/refund" class="inline">${csrfField(session)}
<input name="note" maxlength="500" placeholder="Reversal reference (optional)" aria-label="Why ${p.transId} is refunded"> <button type="submit">Mark for refund</button></form>`
        : ''
    }</td></tr>`,
  );
  return html`<section class="card" aria-labelledby="unallocated"><h2 id="unallocated">Unallocated payments (${total})</h2>
<p class="muted">Paybill payments whose account number matched no open link, and till payments whose amount no single open link has due. Assigning one to a link counts it there as usual. One you refund with M-Pesa yourself (a reversal) you mark for refund: it leaves this list and counts nowhere.</p>
${data.length === 0 ? html`<p class="empty">None.</p>` : html`<table><thead><tr><th>Receipt</th><th>Amount</th><th>Account number</th><th>Payer</th><th>Received</th><th>Assign to a link, or mark for refund</th></tr></thead><tbody>${rows}</tbody></table>`}
</section>`;
}

function connectBody(form: Form): Record<string, unknown> {
  return Object.fromEntries(connectFields.map((name) => {
    const value = optionalText(form, name);
    if (!booleanFields.includes(name) || value === undefined) return [name, value];
    // Anything but the two options is handed on as posted, for the API's schema to refuse next to the field.
    return [name, value === 'true' ? true : value === 'false' ? false : value];
  }));
}

export function registerMobileMoneyPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/mobile-money',
    withSession(deps, async (session, request, reply) => {
      const connected = (request.query as Record<string, unknown>).connected === '1';
      const assigned = (request.query as Record<string, unknown>).assigned === '1';
      const refunded = (request.query as Record<string, unknown>).refund === '1';
      const banner = connected
        ? notice('ok', 'M-Pesa accepted the credentials: the shortcode is connected.')
        : assigned ? notice('ok', 'The payment was assigned; the link counts it shortly.')
          : refunded ? notice('ok', 'The payment was marked for refund outside Malipo; it counts nowhere.') : html``;
      return sendPage(reply, 200, await render(deps, session, {}, noErrors, banner));
    }),
  );

  app.post(
    '/mobile-money/unallocated/:transId/assign',
    withAction(deps, async (session, form, request, reply) => {
      const transId = String((request.params as Record<string, unknown>).transId ?? '');
      const result = await attempt(
        () => assignUnallocatedPayment({ ...deps, logger: request.log as never }, session.auth, { transId, linkId: form.get('linkId') ?? '', by: `user:${session.user.id}` }),
        [],
      );
      if (result.ok) return reply.redirect('/dashboard/mobile-money?assigned=1', 303);
      return sendPage(reply, result.status, await render(deps, session, {}, noErrors, notice('error', result.errors.form)));
    }, { role: 'developer' }),
  );

  app.post(
    '/mobile-money/unallocated/:transId/refund',
    withAction(deps, async (session, form, request, reply) => {
      const transId = String((request.params as Record<string, unknown>).transId ?? '');
      const note = (form.get('note') ?? '').trim().slice(0, 500);
      const result = await attempt(
        () => markUnallocatedForRefund({ ...deps, logger: request.log as never }, session.auth, { transId, by: `user:${session.user.id}`, note: note || null }),
        [],
      );
      if (result.ok) return reply.redirect('/dashboard/mobile-money?refund=1', 303);
      return sendPage(reply, result.status, await render(deps, session, {}, noErrors, notice('error', result.errors.form)));
    }, { role: 'developer' }),
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
      const shown = {
        shortcode: form.get('shortcode') ?? '', environment: form.get('environment') ?? undefined, shortcodeType: form.get('shortcodeType') ?? undefined,
        storeNumber: form.get('storeNumber') ?? '', c2bSettlesAlone: form.get('c2bSettlesAlone') ?? undefined,
        c2bUnallocatedAllowed: form.get('c2bUnallocatedAllowed') ?? undefined, c2bPullNominatedNumber: form.get('c2bPullNominatedNumber') ?? '',
      };
      return sendPage(reply, result.status, await render(deps, session, shown, result.errors, html``));
    }, { role: 'owner' }),
  );
}
