import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { parseInput } from '../../api/route.js';
import { linkIdParams } from '../../api/routes/payment-links/schemas.js';
import { simulatePaymentRoute } from '../../api/routes/payment-links/simulate.js';
import { AppError, notFound } from '../../domain/errors.js';
import { getLinkDetail } from '../../services/payment-links/link-detail.js';
import { cancelStoreLink, simulateStorePayment } from '../../services/payment-links/payment-links.js';
import { attempt, parseApiBody } from './forms.js';
import { sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { dashboardPage, notice } from './layout.js';
import { linkDetailBody, temporalUiHref } from './link-detail-view.js';
import type { DashboardSession } from './session.js';

/** What a redirect after an action says on the detail page (post/redirect/get). */
const doneNotices: Record<string, string> = {
  cancelled: 'The payment link was cancelled. Its checkout no longer takes payments.',
  simulated: 'A simulated payment was sent through the workflow. No money moved.',
};

/** The link id of the URL, checked with the API's own rule: anything else is a 404, as in the API. */
function linkIdOf(request: FastifyRequest): string {
  try {
    return parseInput(linkIdParams, request.params, 'query').id;
  } catch (err) {
    if (err instanceof AppError) throw notFound('payment link');
    throw err;
  }
}

async function renderDetail(deps: ApiDeps, session: DashboardSession, id: string, banner: SafeHtml): Promise<string> {
  const detail = await getLinkDetail(deps, session.auth, id);
  const view = { ...detail, temporalUiHref: temporalUiHref(deps.config.temporal.uiUrl, detail.namespace, detail.workflowId) };
  return dashboardPage(session, 'links', `Payment link ${id}`, linkDetailBody(session, view, banner));
}

/**
 * An action on one link: a success redirects to its page with a notice; a refusal (409 not
 * PENDING, 403 live mode, 503 engine away) shows the page again with the service's message
 * and status, having changed nothing.
 */
async function linkAction(deps: ApiDeps, session: DashboardSession, id: string, reply: FastifyReply, done: string, work: () => Promise<unknown>) {
  const result = await attempt(work, []);
  if (result.ok) return reply.redirect(`/dashboard/links/${id}?done=${done}`, 303);
  if (result.headers) reply.headers(result.headers);
  return sendPage(reply, result.status, await renderDetail(deps, session, id, notice('error', result.errors.form)));
}

export function registerLinkDetailPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/links/:id',
    withSession(deps, async (session, request, reply) => {
      const id = linkIdOf(request);
      const done = (request.query as Record<string, unknown>).done;
      const banner = typeof done === 'string' && doneNotices[done] ? notice('ok', doneNotices[done]) : html``;
      return sendPage(reply, 200, await renderDetail(deps, session, id, banner));
    }),
  );

  app.post(
    '/links/:id/cancel',
    withAction(
      deps,
      async (session, _form, request, reply) => {
        const id = linkIdOf(request);
        return linkAction(deps, session, id, reply, 'cancelled', () => cancelStoreLink(deps, session.auth, id));
      },
      { role: 'developer' },
    ),
  );

  app.post(
    '/links/:id/simulate',
    withAction(
      deps,
      async (session, form, request, reply) => {
        const id = linkIdOf(request);
        return linkAction(deps, session, id, reply, 'simulated', async () => {
          const { rail } = parseApiBody(simulatePaymentRoute.body!, { rail: form.get('rail') ?? undefined });
          return simulateStorePayment(deps, session.auth, id, rail);
        });
      },
      { role: 'developer' },
    ),
  );
}
