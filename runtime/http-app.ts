import type { FastifyInstance } from 'fastify';
import { buildApi, type BuildAppOptions } from '../api/app.js';
import type { ApiDeps } from '../api/deps.js';
import { registerCheckoutPages } from '../web/checkout/routes.js';
import { registerDashboardPages } from '../web/dashboard/routes.js';
import { registerDocsPage } from '../web/docs/routes.js';

/** What one API process serves on its port: the JSON API, the hosted checkout, the dashboard and the API reference. */
export async function buildApp(deps: ApiDeps, opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = await buildApi(deps, opts);
  registerCheckoutPages(app, deps);
  registerDocsPage(app, deps);
  registerDashboardPages(app, deps);
  return app;
}
