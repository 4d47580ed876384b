import type { FastifyError, FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { limitOf } from '../../api/plugins/rate-limit.js';
import { AppError } from '../../domain/errors.js';
import { isCsrfRefusal, refuseForgedRequest, sendPage } from './handlers.js';
import { html } from './html.js';
import { plainPage } from './layout.js';
import { registerAccountPages } from './account.js';
import { registerKeysPage } from './keys.js';
import { registerLinksPage } from './links.js';
import { registerLoginPages } from './login.js';
import { registerMobileMoneyPage } from './mobile-money.js';
import { registerReconciliationPage } from './reconciliation.js';
import { registerTreasuryPage } from './treasury.js';
import { registerCookiePlugins } from './plugins.js';
import { registerTeamPages } from './team.js';
import { registerSettingsPage } from './settings.js';
import { registerWalletsPage } from './wallets.js';
import { registerWebhookActions } from './webhook-actions.js';
import { registerWebhookDeliveriesPage } from './webhook-deliveries.js';
import { registerWebhooksPage } from './webhooks.js';

/** Requests per minute per IP across the dashboard, as the API's default limit. */
const pageRequestsPerMinute = 600;

const securityHeaders = {
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
};

/**
 * The merchant dashboard under /dashboard: server-rendered pages over the same services the API
 * uses. Registered in its own Fastify scope, so its form parser, HTML error pages and headers
 * never touch the JSON API.
 */
export function registerDashboardPages(app: FastifyInstance, deps: ApiDeps): void {
  app.register(
    async (scope) => {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 32 * 1024 }, (_req, body, done) => {
        done(null, new URLSearchParams(body as string));
      });
      await registerCookiePlugins(scope, deps);
      const pageLimit = limitOf(scope, 'dashboard', pageRequestsPerMinute);
      scope.addHook('onRequest', async (request, reply) => {
        reply.headers(securityHeaders);
        await pageLimit(request, reply);
      });
      scope.setErrorHandler((err: FastifyError | AppError, request, reply) => {
        if (!(err instanceof AppError) && isCsrfRefusal(err)) return refuseForgedRequest(reply);
        if (err instanceof AppError && err.headers) reply.headers(err.headers);
        const known = err instanceof AppError && err.status < 500;
        if (!known) request.log.error({ err }, 'dashboard error');
        const status = err instanceof AppError ? err.status : err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
        const message = known || status < 500 ? err.message : 'Something went wrong on our side. Quote the request id when you contact support.';
        return sendPage(reply, status, errorPage(message, request.id));
      });
      scope.setNotFoundHandler((request, reply) => sendPage(reply, 404, errorPage('There is no such dashboard page.', request.id)));
      registerLoginPages(scope, deps);
      registerLinksPage(scope, deps);
      registerMobileMoneyPage(scope, deps);
      registerWalletsPage(scope, deps);
      registerWebhooksPage(scope, deps);
      registerWebhookDeliveriesPage(scope, deps);
      registerWebhookActions(scope, deps);
      registerReconciliationPage(scope, deps);
      registerTreasuryPage(scope, deps);
      registerKeysPage(scope, deps);
      registerAccountPages(scope, deps);
      registerTeamPages(scope, deps);
      registerSettingsPage(scope, deps);
    },
    { prefix: '/dashboard' },
  );
}

function errorPage(message: string, requestId: string): string {
  return plainPage(
    'Dashboard',
    html`<div class="card"><h1>That did not work</h1>
<p role="alert">${message}</p>
<p class="muted">Request id ${requestId}</p>
<p><a href="/dashboard">Back to the dashboard</a></p></div>`,
  );
}
