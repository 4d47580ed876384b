import proxyAddr from '@fastify/proxy-addr';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { AppError } from '../domain/errors.js';
import { newId, newPooledId } from '../domain/ids.js';
import type { ApiDeps } from './deps.js';
import { anonymous, authenticate } from './plugins/auth.js';
import { registerBodyDepthGuard } from './plugins/body-depth.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerMetrics, registerMetricsRoute } from './plugins/metrics.js';
import { registerTracing } from './plugins/tracing.js';
import { withIdempotency } from './plugins/idempotency.js';
import { limitHookOf, localLimitHookOf, registerRateLimits } from './plugins/rate-limit.js';
import { documentOnly, registerOpenApi, routeSchema } from './openapi.js';
import { registerStatic } from './plugins/static.js';
import { parseInput, type RouteDef } from './route.js';
import { correlatedIds, freshIds } from '../services/request-ids.js';
import { drainHandoff } from '../services/payment-links/start-handoff.js';
import { allRoutes } from './routes/index.js';

/** Default limit for authenticated endpoints without a limit of their own, per IP per minute. */
const defaultRateLimitPerMinute = 600;

export { loggerRedactPaths } from './plugins/log-redaction.js';

export interface BuildAppOptions {
  logger?: boolean | object;
}

/**
 * The JSON API on a new Fastify instance: error handling, guards, static assets and every route
 * of api/routes. The pages (checkout, dashboard, docs) are added by the composition root
 * (runtime/http-app.ts): the API knows no pages.
 */
export async function buildApi(deps: ApiDeps, opts: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    loggerInstance: deps.logger,
    genReqId: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && /^[\w.-]{1,100}$/.test(incoming) ? incoming : newPooledId('request');
    },
    bodyLimit: 64 * 1024,
    // Off unless TRUST_PROXY lists the proxies: only their X-Forwarded-For is believed (docs/operations.md).
    trustProxy: deps.config.trustProxy === false ? false : rememberedTrust(deps.config.trustProxy),
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: unroutablePath,
    clientErrorHandler: malformedHttpRequest,
  } as never) as unknown as FastifyInstance;
  // A callback hook, not an async one: no promise per request for one header.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  registerTracing(app, deps.tracer);
  registerErrorHandling(app);
  registerMetrics(app, deps);
  registerBodyDepthGuard(app);
  await registerRateLimits(app, deps.rateLimitStore);
  registerMetricsRoute(app, deps);
  await registerStatic(app);
  await registerOpenApi(app, deps.config.publicBaseUrl);
  for (const route of allRoutes) registerRoute(app, deps, route);
  // Workflow starts handed off by creating requests finish before the pool they mark rows in closes.
  app.addHook('onClose', () => drainHandoff(deps.pool));
  return app;
}

/** How many peer and X-Forwarded-For addresses `rememberedTrust` keeps its answer for (then it starts again). */
const trustAnswersKept = 4_096;

/**
 * TRUST_PROXY's list compiled once, as Fastify would, with each address's answer kept: Fastify
 * asks it for the peer and the forwarded addresses every time a request's `ip` is read, and each
 * question parsed the address again (ipaddr.js was 4 % of the serving CPU on `GET /v1/chains`).
 * The answer depends on the address alone. Kept for at most `trustAnswersKept` addresses, so a
 * client sending a new X-Forwarded-For each time grows nothing.
 */
export function rememberedTrust(list: readonly string[]): (address: string, hop: number) => boolean {
  const trust = proxyAddr.compile([...list]);
  const answers = new Map<string, boolean>();
  return (address, hop) => {
    let trusted = answers.get(address);
    if (trusted === undefined) {
      if (answers.size >= trustAnswersKept) answers.clear();
      answers.set(address, (trusted = trust(address, hop)));
    }
    return trusted;
  };
}

/**
 * A path the router cannot even match (a broken percent-encoding, a segment longer than any id):
 * it names no object of ours, so it is the same 404 as an unknown id, with the documented body.
 */
function unroutablePath(_err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id).status(404).send({
    error: { type: 'not_found_error', code: 'not_found', message: 'No such object: the path is not one of ours.', requestId: request.id },
  });
}

/**
 * A request Node's HTTP parser refuses before Fastify sees it (headers over 16 KB, broken
 * framing): answered with the documented error body and a request id too, then the connection closes.
 */
function malformedHttpRequest(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] = err.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 'headers_too_large', 'The request line and headers are too large (at most 16 KB).'] as const
    : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout', 'The request was not received in time.'] as const
      : [400, 'malformed_request', 'The request is not valid HTTP/1.1.'] as const;
  const requestId = newId('request');
  const body = JSON.stringify({ error: { type: status === 408 ? 'api_error' : 'invalid_request_error', code, message, requestId } });
  socket.end(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request'}\r\n` +
      `Connection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n\r\n${body}`,
  );
}

function registerRoute(app: FastifyInstance, deps: ApiDeps, route: RouteDef): void {
  app.route({
    method: route.method,
    url: route.url,
    schema: routeSchema(route),
    ...documentOnly,
    ...(route.bodyLimitBytes ? { bodyLimit: route.bodyLimitBytes } : {}),
    // Counted before the body is read: a client over its limit costs no parsing.
    onRequest: (route.localRateLimit ? localLimitHookOf : limitHookOf)(app, route.operationId, route.rateLimitPerMinute ?? defaultRateLimitPerMinute),
    handler: async (request: FastifyRequest, reply) => {
      // A remembered key is answered without a promise (api/plugins/auth.ts).
      const authenticated = route.auth === 'none' ? anonymous : authenticate(deps, request, route.auth);
      const auth = authenticated instanceof Promise ? await authenticated : authenticated;
      // Validated before the Idempotency-Key is claimed: a request refused here ran nothing and binds no key.
      const params = route.params ? parseParams(route, request.params) : request.params;
      const query = route.query ? parseInput(route.query, request.query, 'query') : request.query;
      const sent = request.body === undefined && route.bodyOptional ? {} : request.body;
      const body = route.body ? parseInput(route.body, sent, 'body') : undefined;
      // Only a POST can carry an Idempotency-Key (withIdempotency runs any other request as it is).
      // What a POST creates keeps the request's id as its correlation id (docs/tracing.md).
      const result = request.method === 'POST'
        ? await withIdempotency(deps, auth, request, reply, (ids) => route.handler({ deps, auth, body, query, params, request, reply, ids: correlatedIds(ids, request.id) }), route.idempotency)
        : await route.handler({ deps, auth, body, query, params, request, reply, ids: freshIds });
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
