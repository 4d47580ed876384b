import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { ApiDeps } from './deps.js';
import { authenticate } from './plugins/auth.js';
import { registerBodyDepthGuard } from './plugins/body-depth.js';
import { registerErrorHandling } from './plugins/errors.js';
import { withIdempotency } from './plugins/idempotency.js';
import { checkRateLimit } from './plugins/rate-limit.js';
import { registerStatic } from './plugins/static.js';
import { parseInput, type RouteDef } from './route.js';
import { allRoutes } from './routes/index.js';
import { registerCheckoutPages } from '../web/checkout/routes.js';
import { registerDocsPage } from '../web/docs/routes.js';
import { registerDashboardPages } from '../web/dashboard/routes.js';

/** Default limit for authenticated endpoints without a limit of their own, per IP per minute. */
const defaultRateLimitPerMinute = 600;

export { loggerRedactPaths } from './plugins/log-redaction.js';

export interface BuildAppOptions {
  logger?: boolean | object;
}

export async function buildApp(deps: ApiDeps, opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    loggerInstance: deps.logger,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && /^[\w.-]{1,100}$/.test(incoming) ? incoming : newId('request');
    },
    bodyLimit: 64 * 1024,
    // Off unless TRUST_PROXY lists the proxies: only their X-Forwarded-For is believed (docs/operations.md).
    trustProxy: deps.config.trustProxy === false ? false : [...deps.config.trustProxy],
    routerOptions: { ignoreTrailingSlash: true },
  } as never) as unknown as FastifyInstance;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerErrorHandling(app);
  registerBodyDepthGuard(app);
  registerStatic(app);
  registerCheckoutPages(app, deps);
  registerDocsPage(app, deps);
  registerDashboardPages(app, deps);
  for (const route of allRoutes) registerRoute(app, deps, route);
  return app;
}

function registerRoute(app: FastifyInstance, deps: ApiDeps, route: RouteDef): void {
  app.route({
    method: route.method,
    url: route.url,
    handler: async (request: FastifyRequest, reply) => {
      const limit = route.rateLimitPerMinute ?? defaultRateLimitPerMinute;
      const rl = await checkRateLimit(deps.rateLimitStore, route.operationId, request.ip, limit, Date.now());
      reply.headers(rl.headers);
      const auth = await authenticate(deps, request, route.auth);
      // Validated before the Idempotency-Key is claimed: a request refused here ran nothing and binds no key.
      const params = route.params ? parseParams(route, request.params) : request.params;
      const query = route.query ? parseInput(route.query, request.query, 'query') : request.query;
      const sent = request.body === undefined && route.bodyOptional ? {} : request.body;
      const body = route.body ? parseInput(route.body, sent, 'body') : undefined;
      const result = await withIdempotency(deps, auth, request, reply, (ids) =>
        route.handler({ deps, auth, body, query, params, request, reply, ids }), route.idempotency);
      if (reply.sent) return reply;
      return result;
    },
  });
}

/** A malformed id in a path is a 404, exactly like an unknown one (DESIGN.md). */
function parseParams(route: RouteDef, params: unknown): unknown {
  const result = route.params!.safeParse(params);
  if (result.success) return result.data;
  throw new AppError('not_found', 'No such object: the id in the path is not one of ours.');
}
