import type { FastifyReply, FastifyRequest, RouteShorthandOptionsWithHandler } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { formOf, type Form } from './forms.js';
import { roleAllows, roleLabels, type Role } from '../../domain/roles.js';
import { html, type SafeHtml } from './html.js';
import { plainPage } from './layout.js';
import { loadSession, originAllowed, type DashboardSession } from './session.js';

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
    const session = await loadSession(deps, request, reply);
    if (!session) return toSignIn(reply);
    return handler(session, request, reply);
  };
}

/** The session each action's guard found, for its handler. */
const actionSessions = new WeakMap<FastifyRequest, DashboardSession>();

/**
 * A state-changing action: a session, a request from our own origin, and a CSRF token of this
 * session in the form (checked by @fastify/csrf-protection, whose refusal the dashboard's error
 * handler answers with `refuseForgedRequest`). Anything less changes nothing. Returns the route's
 * options and handler together: `app.post(url, withAction(...))`.
 */
export function withAction(
  deps: ApiDeps,
  handler: (session: DashboardSession, form: Form, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  opts: { role?: Role } = {},
): RouteShorthandOptionsWithHandler {
  const needed = opts.role ?? 'developer';
  return {
    preHandler: [
      async (request, reply) => {
        const session = await loadSession(deps, request, reply);
        if (!session) return toSignIn(reply);
        if (!originAllowed(deps, request)) return refuseForgedRequest(reply);
        if (!roleAllows(session.role, needed)) return refuseForRole(reply, session.role, needed);
        actionSessions.set(request, session);
      },
      (request, reply, done) => request.server.csrfProtection(request, reply, done),
    ],
    handler: async (request, reply) => {
      const session = actionSessions.get(request);
      if (!session) throw new Error('dashboard action without its guard');
      return handler(session, formOf(request), request, reply);
    },
  };
}

/** The codes @fastify/csrf-protection refuses with: no secret (no session cookie) or a bad token. */
export const isCsrfRefusal = (err: { code?: string }): boolean => err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET';

/** Whether the session's role may take actions that need `needed`: pages hide what it may not do. */
export const can = (session: DashboardSession, needed: Role): boolean => roleAllows(session.role, needed);

/** A 403 page saying why an action was refused; nothing was changed. */
function refusal(reply: FastifyReply, title: string, why: SafeHtml): FastifyReply {
  return sendPage(
    reply,
    403,
    plainPage(title, html`<div class="card"><h1>${title}</h1>
${why}
<p><a href="/dashboard">Back to the dashboard</a></p></div>`),
  );
}

/** An action the session's role does not allow: 403, nothing changed. */
export function refuseForRole(reply: FastifyReply, held: Role, needed: Role): FastifyReply {
  return refusal(
    reply,
    'Not allowed',
    html`<p role="alert">Your role in this store is ${roleLabels[held]}. This needs ${roleLabels[needed]}${needed === 'owner' ? '' : ' or Owner'}. Nothing was changed.</p>`,
  );
}

export function refuseForgedRequest(reply: FastifyReply): FastifyReply {
  return refusal(reply, 'Request refused', html`<p>This form did not come from a page of this dashboard, or the page is out of date. Nothing was changed.</p>`);
}
