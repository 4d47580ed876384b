import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { changePassword } from '../../services/dashboard/accounts.js';
import { passwordRules } from '../../services/dashboard/passwords.js';
import { endUserSessions, switchDashboardSession } from '../../services/dashboard/sessions.js';
import { environments, type Environment } from '../../domain/environment.js';
import { AppError } from '../../domain/errors.js';
import { roleLabels } from '../../domain/roles.js';
import { attempt, noErrors, type FormErrors } from './forms.js';
import { sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, formError, notice } from './layout.js';
import { clearSessionCookie, type DashboardSession } from './session.js';

/**
 * The signed-in person's own page: their stores and roles, a password change (which signs them
 * out everywhere else) and "sign out everywhere". Also the switcher's target: another store, or
 * the other environment, for this session only.
 */
function accountPage(session: DashboardSession, errors: FormErrors, banner?: SafeHtml): string {
  return dashboardPage(
    session,
    'account',
    'Your account',
    html`${banner ?? ''}
<section class="card"><h2>Signed in as</h2>
<p data-testid="account-email"><strong>${session.user.email}</strong></p>
<table class="table"><thead><tr><th>Store</th><th>Your role</th></tr></thead><tbody>${session.stores.map(
      (s) => html`<tr><td>${s.storeName} <small class="muted">${s.storeId}</small></td><td>${roleLabels[s.role]}</td></tr>`,
    )}</tbody></table>
</section>
<section class="card" aria-labelledby="pw-title"><h2 id="pw-title">Change your password</h2>
${formError(errors)}
<form method="post" action="/dashboard/account/password" novalidate>
${csrfField(session)}
<input type="text" name="username" value="${session.user.email}" autocomplete="username" hidden>
${field({ name: 'currentPassword', label: 'Current password', type: 'password', secret: true, errors, required: true, autocomplete: 'current-password' })}
${field({ name: 'newPassword', label: 'New password', type: 'password', secret: true, errors, required: true, autocomplete: 'new-password', hint: `At least ${passwordRules.min} characters.` })}
<button type="submit" class="primary">Change password</button>
</form>
<p class="muted">Changing it signs you out on every other device.</p>
</section>
<section class="card"><h2>Sessions</h2>
<p>Lost a laptop, or signed in somewhere you should not have? End every session of your account, this one included.</p>
<form method="post" action="/dashboard/account/sign-out-everywhere" data-confirm="Sign out on every device, this one included?">
${csrfField(session)}<button type="submit" class="danger">Sign out everywhere</button></form>
</section>`,
  );
}

const pick = (value: string | null): string => value ?? '';

export function registerAccountPages(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/account', withSession(deps, async (session, request, reply) => {
    const changed = (request.query as Record<string, unknown>).passwordChanged === '1';
    return sendPage(reply, 200, accountPage(session, noErrors, changed ? notice('ok', 'Your password is changed. Your other sessions are signed out.') : undefined));
  }));

  app.post(
    '/account/password',
    withAction(deps, async (session, form, request, reply) => {
      const result = await attempt(
        () => changePassword(deps, session.user.id, { current: pick(form.get('currentPassword')), next: pick(form.get('newPassword')) }, session.tokenHash),
        ['currentPassword', 'newPassword'],
      );
      if (!result.ok) return sendPage(reply, result.status, accountPage(session, result.errors));
      request.log.info({ userId: session.user.id, endedSessions: result.value }, 'dashboard password changed');
      return reply.redirect('/dashboard/account?passwordChanged=1', 303);
    }, { role: 'viewer' }),
  );

  app.post(
    '/account/sign-out-everywhere',
    withAction(deps, async (session, _form, request, reply) => {
      // Every session of the person, this one included.
      const ended = await endUserSessions(deps, session.user.id);
      request.log.info({ userId: session.user.id, endedSessions: ended }, 'dashboard sign-out everywhere');
      clearSessionCookie(deps, request, reply);
      return reply.redirect('/dashboard/login?everywhere=1', 303);
    }, { role: 'viewer' }),
  );

  // The switcher: another store of the person's, or the other environment. Any role may look.
  app.post(
    '/switch',
    withAction(deps, async (session, form, _request, reply) => {
      const storeId = form.get('storeId') ?? session.auth.storeId;
      const environment = form.get('environment') ?? session.auth.environment;
      if (!(environments as readonly string[]).includes(environment)) throw new AppError('invalid_field', 'Choose test or live.', 'environment');
      if (!session.stores.some((s) => s.storeId === storeId)) throw new AppError('not_found', 'No such store.', 'storeId');
      await switchDashboardSession(deps, session.tokenHash, { storeId, environment: environment as Environment });
      return reply.redirect(safeReturn(form.get('return')), 303);
    }, { role: 'viewer' }),
  );
}

/** Back to the section the switch was made on (its list, not an object of the other store): never another site. */
function safeReturn(value: string | null): string {
  return value && /^\/dashboard\/(mobile-money|wallets|webhooks|keys|settings|team|account)$/.test(value) ? value : '/dashboard';
}
