import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { Metrics } from '../../domain/metrics.js';
import type { ApiDeps } from '../deps.js';
import { limitHookOf } from './rate-limit.js';

/** What a request that matched no route is counted under: the raw path has no bound. */
const unmatched = 'unmatched';

/**
 * Counts every answer by method, route pattern and status (an onResponse callback hook: no
 * promise per request), except the scrapes of `GET /metrics` themselves. Without a token or a
 * registry that route is a 404 like any unknown path, so a deployment that never set one exposes
 * nothing.
 */
export function registerMetrics(app: FastifyInstance, deps: Pick<ApiDeps, 'metrics'>): void {
  const metrics: Metrics | undefined = deps.metrics;
  if (metrics) {
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? unmatched;
      if (route !== '/metrics') metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
    // The refusal's code is only known here: the answer's status (409) is shared with other conflicts.
    app.addHook('onError', (_request, _reply, err, done) => {
      if (err instanceof AppError && err.code.startsWith('idempotency_')) metrics.idempotencyConflict(err.code);
      done();
    });
  }
}

/** Scrapes a minute per client IP: a scraper asks every 15 s or so; a guesser gets few tries. */
const scrapesPerMinute = 120;

/**
 * `GET /metrics` for a bearer of METRICS_TOKEN, under a rate limit of its own (registered after
 * the rate-limit plugin). Off the OpenAPI document, logged only at warn.
 */
export function registerMetricsRoute(app: FastifyInstance, deps: Pick<ApiDeps, 'config' | 'metricsText'>): void {
  const token = deps.config.metricsToken;
  const text = deps.metricsText;
  const expected = token ? digest(token) : undefined;
  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn', onRequest: limitHookOf(app, 'metrics', scrapesPerMinute) }, async (request: FastifyRequest, reply: FastifyReply) => {
    if (!expected || !text) throw new AppError('not_found', 'No such object: the path is not one of ours.');
    const given = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!given) throw new AppError('missing_api_key', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.', undefined, { 'www-authenticate': 'Bearer' });
    // Compared as digests: equal lengths, constant time, whatever was sent.
    if (!timingSafeEqual(digest(given), expected)) throw new AppError('invalid_api_key', 'That is not the metrics token.', undefined, { 'www-authenticate': 'Bearer' });
    const { contentType, body } = await text();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
