import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import {
  acceptInvitation, cancelInvitation, changeMemberRole, invitedAccountExists, inviteMember, openInvitation, removeMember, teamOf,
} from '../../services/dashboard/team.js';
import { AppError } from '../../domain/errors.js';
import { roleLabels, roles, type Role } from '../../domain/roles.js';
import { attempt, formOf, noErrors, type FormErrors } from './forms.js';
import { can, refuseForgedRequest, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, fieldError, formatTime, formError, notice, plainPage } from './layout.js';
import { loginLimits, openSession } from './login.js';
import { loadSession, originAllowed, type DashboardSession } from './session.js';
import { listMemberships, signIn } from '../../services/dashboard/accounts.js';
import { switchDashboardSession } from '../../services/dashboard/sessions.js';
import { passwordRules } from '../../services/dashboard/passwords.js';

/**
 * The Team page: who can use this store's dashboard and with which role. Owners invite people by
 * email (Malipo sends no email: the owner passes the link on), change roles and remove members;
 * everyone else sees the list. An invitation link opens /dashboard/invitations/:token, where the
 * invited person signs in, or creates their account, to join.
 */
const roleHelp: Record<Role, string> = {
  owner: 'everything, including where money goes (M-Pesa, wallets), store settings and the team',
  developer: 'payment links, API keys and webhooks',
  viewer: 'sees every page, changes nothing',
};

function roleSelect(name: string, selected: Role, id: string): SafeHtml {
  return html`<select id="${id}" name="${name}">${roles.map(
    (r) => html`<option value="${r}"${r === selected ? html` selected` : ''}>${roleLabels[r]}</option>`,
  )}</select>`;
}

async function teamPage(deps: ApiDeps, session: DashboardSession, state: { banner?: SafeHtml; inviteErrors?: FormErrors; rowError?: string } = {}): Promise<string> {
  const team = await teamOf(deps, session.auth.storeId);
  const owner = can(session, 'owner');
  const errors = state.inviteErrors ?? noErrors;
  const rows = team.members.map((m) => {
    const self = m.userId === session.user.id;
    const manage = owner
      ? html`<form method="post" action="/dashboard/team/${m.userId}/role" class="inline">${csrfField(session)}
<label class="visually-hidden" for="role-${m.userId}">Role of ${m.email}</label>${roleSelect('role', m.role, `role-${m.userId}`)}
<button type="submit" class="copy">Change</button></form>
<form method="post" action="/dashboard/team/${m.userId}/remove" class="inline" data-confirm="${self ? 'Leave this store? You lose access at once.' : `Remove ${m.email} from the store?`}">
${csrfField(session)}<button type="submit" class="danger">${self ? 'Leave' : 'Remove'}</button></form>`
      : html``;
    return html`<tr data-member="${m.email}"><td>${m.email}${self ? html` <small>(you)</small>` : ''}</td><td data-testid="role">${roleLabels[m.role]}</td><td>${formatTime(m.since)}</td><td>${manage}</td></tr>`;
  });
  const invitations = team.invitations.length
    ? html`<h3>Open invitations</h3><table class="table" tabindex="0" aria-label="Open invitations"><thead><tr><th>Email</th><th>Role</th><th>Valid until</th><th></th></tr></thead><tbody>${team.invitations.map(
        (i) => html`<tr data-invitation="${i.email}"><td>${i.email}</td><td>${roleLabels[i.role]}</td><td>${formatTime(i.expiresAt)}</td><td>${
          owner ? html`<form method="post" action="/dashboard/team/invitations/${i.id}/cancel">${csrfField(session)}<button type="submit" class="danger">Withdraw</button></form>` : ''
        }</td></tr>`,
      )}</tbody></table>`
    : html``;
  return dashboardPage(
    session,
    'team',
    'Team',
    html`${state.banner ?? ''}${notice('error', state.rowError)}
<section class="card"><h2>Members</h2>
<table class="table" data-testid="members" tabindex="0" aria-label="Members"><thead><tr><th>Email</th><th>Role</th><th>Since</th><th></th></tr></thead><tbody>${rows}</tbody></table>
${invitations}
<dl class="roles">${roles.map((r) => html`<dt>${roleLabels[r]}</dt><dd>${roleHelp[r]}</dd>`)}</dl>
</section>
${owner ? html`<section class="card" aria-labelledby="invite-title"><h2 id="invite-title">Invite someone</h2>
${formError(errors)}
<form method="post" action="/dashboard/team/invitations" novalidate>
${csrfField(session)}
${field({ name: 'email', label: 'Their email', type: 'email', errors, required: true })}
<div class="field"><label for="f-role">Role</label>${roleSelect('role', 'developer', 'f-role')}${fieldError(errors, 'role')}</div>
<button type="submit" class="primary">Create invitation link</button>
</form>
<p class="muted">You get a link to send them yourself. It works once, for 7 days.</p>
</section>` : ''}`,
  );
}

export function registerTeamPages(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/team', withSession(deps, async (session, _request, reply) => sendPage(reply, 200, await teamPage(deps, session))));

  app.post(
    '/team/invitations',
    withAction(deps, async (session, form, request, reply) => {
      const result = await attempt(
        () => inviteMember(deps, session.auth.storeId, session.user.id, { email: form.get('email') ?? '', role: form.get('role') ?? '' }),
        ['email', 'role'],
      );
      if (!result.ok) return sendPage(reply, result.status, await teamPage(deps, session, { inviteErrors: result.errors }));
      request.log.info({ storeId: session.auth.storeId, by: session.user.id, role: result.value.role }, 'dashboard invitation created');
      const url = `${deps.config.publicBaseUrl}/dashboard/invitations/${result.value.token}`;
      // No redirect: the link exists only in this answer (no-store), as a new API key does.
      const banner = notice('ok', html`Invitation for <strong>${result.value.email}</strong> as ${roleLabels[result.value.role]}. Send them this link;
it is shown only now, works once, for 7 days:<br><code data-testid="invitation-link">${url}</code>
<button type="button" class="copy" data-copy="${url}">Copy</button>`);
      return sendPage(reply, 201, await teamPage(deps, session, { banner }));
    }, { role: 'owner' }),
  );

  app.post(
    '/team/invitations/:id/cancel',
    withAction(deps, async (session, _form, request, reply) => {
      await cancelInvitation(deps, session.auth.storeId, (request.params as { id: string }).id);
      return reply.redirect('/dashboard/team', 303);
    }, { role: 'owner' }),
  );

  app.post(
    '/team/:userId/role',
    withAction(deps, async (session, form, request, reply) => {
      const { userId } = request.params as { userId: string };
      const result = await attempt(() => changeMemberRole(deps, session.auth.storeId, userId, form.get('role') ?? ''), []);
      if (!result.ok) return sendPage(reply, result.status, await teamPage(deps, session, { rowError: result.errors.form }));
      request.log.info({ storeId: session.auth.storeId, by: session.user.id, member: userId, role: form.get('role') }, 'dashboard member role changed');
      return reply.redirect('/dashboard/team', 303);
    }, { role: 'owner' }),
  );

  app.post(
    '/team/:userId/remove',
    withAction(deps, async (session, _form, request, reply) => {
      const { userId } = request.params as { userId: string };
      const result = await attempt(() => removeMember(deps, session.auth.storeId, userId), []);
      if (!result.ok) return sendPage(reply, result.status, await teamPage(deps, session, { rowError: result.errors.form }));
      request.log.info({ storeId: session.auth.storeId, by: session.user.id, member: userId }, 'dashboard member removed');
      return reply.redirect(userId === session.user.id ? '/dashboard/account' : '/dashboard/team', 303);
    }, { role: 'owner' }),
  );

  // Accepting an invitation: the page shows the store and role; the invited person signs in (an
  // existing account) or picks a password (a new one). Signed in as that email, one click joins.
  app.get('/invitations/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    const invitation = await openInvitation(deps, token);
    const session = await loadSession(deps, request, reply);
    const exists = await invitedAccountExists(deps, invitation.email);
    return sendPage(reply, 200, invitationPage(token, invitation, session, exists, noErrors));
  });

  const limits = loginLimits(app);
  app.post('/invitations/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    if (!originAllowed(deps, request)) return refuseForgedRequest(reply);
    // A password is checked here too: the sign-in form's limits, per IP and per invited email.
    await limits.perIp(request, reply);
    const invitation = await openInvitation(deps, token);
    await limits.perEmail(request, reply, invitation.email);
    const form = formOf(request);
    const session = await loadSession(deps, request, reply);
    const password = form.get('password') ?? '';
    const exists = await invitedAccountExists(deps, invitation.email);
    const result = await attempt(async () => {
      if (session && session.user.email === invitation.email) {
        // The signed-in person: the session's CSRF token must be in the form.
        if (form.get('csrf') === null) throw new AppError('wrong_environment', 'This form is out of date. Reload the page.');
        await new Promise<void>((resolve, reject) => request.server.csrfProtection(request, reply, (err?: Error) => (err ? reject(err) : resolve())));
        await acceptInvitation(deps, token, { userId: session.user.id, email: session.user.email });
        return { userId: session.user.id, email: session.user.email, signedInAlready: true };
      }
      if (exists) {
        const signedIn = await signIn(deps, { email: invitation.email, password });
        await acceptInvitation(deps, token, { userId: signedIn.userId, email: signedIn.email });
        return { userId: signedIn.userId, email: signedIn.email, signedInAlready: false };
      }
      const made = await acceptInvitation(deps, token, { newPassword: password });
      return { userId: made.userId, email: invitation.email, signedInAlready: false };
    }, ['password']);
    if (!result.ok) return sendPage(reply, result.status, invitationPage(token, invitation, session, exists, result.errors));
    if (result.value.signedInAlready && session) {
      await switchDashboardSession(deps, session.tokenHash, { storeId: invitation.storeId, environment: 'test' });
    } else {
      await openSession(deps, request, reply, { userId: result.value.userId, email: result.value.email, memberships: await listMemberships(deps.pool, result.value.userId) }, invitation.storeId);
    }
    request.log.info({ storeId: invitation.storeId, userId: result.value.userId, role: invitation.role }, 'dashboard invitation accepted');
    return reply.redirect('/dashboard?joined=1', 303);
  });
}

function invitationPage(
  token: string,
  invitation: { storeName: string; email: string; role: Role },
  session: DashboardSession | null,
  exists: boolean,
  errors: FormErrors,
): string {
  const signedInAs = session?.user.email;
  const form = signedInAs === invitation.email
    ? html`<form method="post" action="/dashboard/invitations/${token}" novalidate>${csrfField(session!)}<button type="submit" class="primary">Join ${invitation.storeName}</button></form>`
    : html`${signedInAs ? html`<p class="muted">You are signed in as ${signedInAs}; this invitation is for ${invitation.email}. Joining signs you in as ${invitation.email}.</p>` : ''}
<form method="post" action="/dashboard/invitations/${token}" novalidate>
<input type="text" name="username" value="${invitation.email}" autocomplete="username" hidden>
${field({
        name: 'password', label: exists ? `Password of ${invitation.email}` : 'Choose a password', type: 'password', secret: true, errors, required: true,
        autocomplete: exists ? 'current-password' : 'new-password', hint: exists ? undefined : `At least ${passwordRules.min} characters.`,
      })}
<button type="submit" class="primary">${exists ? 'Sign in and join' : 'Create account and join'}</button>
</form>`;
  return plainPage(
    'Invitation',
    html`<div class="card login"><h1>Join ${invitation.storeName}</h1>
<p>You are invited as <strong>${roleLabels[invitation.role]}</strong>, as <strong>${invitation.email}</strong>.</p>
${formError(errors)}${form}</div>`,
  );
}
