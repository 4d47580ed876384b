import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { formOf, type Form } from './forms.js';
import { html } from './html.js';
import { plainPage } from './layout.js';
import { csrfValid, loadSession, originAllowed, type DashboardSession } from './session.js';

/** The guards every dashboard route goes through, so no page can forget one. */
export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply.status(status).header('content-type', 'text/html; charset=utf-8').send(page);
}

export const toSignIn = (reply: FastifyReply): FastifyReply => reply.redirect('/dashboard/login', 303);

/** A page: the session's store and environment, or the sign-in page. */
export function withSession(
  deps: ApiDeps,
  handler: (session: DashboardSession, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await loadSession(deps, request);
    if (!session) return toSignIn(reply);
    return handler(session, request, reply);
  };
}

/**
 * A state-changing action: a session, a request from our own origin, and the session's CSRF
 * token in the form. Anything less changes nothing.
 */
export function withAction(
  deps: ApiDeps,
  handler: (session: DashboardSession, form: Form, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await loadSession(deps, request);
    if (!session) return toSignIn(reply);
    const form = formOf(request);
    if (!originAllowed(deps, request) || !csrfValid(session, form.get('csrf'))) return refuseForgedRequest(reply);
    return handler(session, form, request, reply);
  };
}

export function refuseForgedRequest(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    403,
    plainPage(
      'Request refused',
      html`<div class="card"><h1>Request refused</h1>
<p>This form did not come from a page of this dashboard, or the page is out of date. Nothing was changed.</p>
<p><a href="/dashboard">Back to the dashboard</a></p></div>`,
    ),
  );
}
