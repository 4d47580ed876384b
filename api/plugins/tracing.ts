import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE } from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import { correlationAttribute } from '../../domain/correlation.js';

/**
 * With tracing on (a tracer in the dependencies), one server span per request, named by its
 * route's pattern (`GET /v1/payment-links/:id`), never by its path: no id, query string, header
 * or body is an attribute. Its attributes are the method, the pattern, the status and the request
 * id as `malipo.correlation_id` (what a link made by the request keeps). A `traceparent` header
 * from the caller makes it a child of the caller's span. The handler runs with the span active,
 * so a workflow start or update it makes carries the trace on (temporal-client/correlation.ts).
 * Without a tracer nothing is registered.
 */
declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span, with tracing on (api/plugins/tracing.ts). */
    traceSpan: Span | null;
  }
}

export function registerTracing(app: FastifyInstance, tracer: Tracer | undefined): void {
  if (!tracer) return;
  // A decorated property, not a WeakMap: the request keeps one shape, and the collector no weak table.
  app.decorateRequest('traceSpan', null);
  // Every route added from here on (the API's, the pages') runs its handler inside its request's span.
  app.addHook('onRoute', (route) => {
    route.handler = inRequestSpan(route.handler as RouteHandlerMethod) as never;
  });
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    // Most callers send no trace context: nothing to parse then.
    const parent = request.headers.traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer.startSpan(route ? `${request.method} ${route}` : request.method, {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        ...(route ? { [ATTR_HTTP_ROUTE]: route } : {}),
        [correlationAttribute]: request.id,
      },
    }, parent);
    request.traceSpan = span;
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = request.traceSpan;
    if (span) {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}

function inRequestSpan(handler: RouteHandlerMethod): RouteHandlerMethod {
  return function (this: FastifyInstance, request, reply) {
    const span = request.traceSpan;
    if (!span) return handler.call(this, request, reply);
    return context.with(trace.setSpan(ROOT_CONTEXT, span), handler, this, request, reply);
  };
}
