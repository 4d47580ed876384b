import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import { postWebhook, type PostRequest, type PostResult } from '../../services/webhooks/http-post.js';

/**
 * A webhook POST as a client span (with tracing on), child of the activity that sends it, and its
 * context in a `traceparent` header so the merchant's own tracing can join the payment's trace
 * (docs/tracing.md). The span names the event and the endpoint by id, never the URL: a URL may hold
 * credentials or a token in its path or query. The header is not signed, like the rest of the
 * transport; the Standard Webhooks signature covers the id, the timestamp and the body.
 */
export async function tracedPost(tracer: Tracer, req: PostRequest, ids: { eventId: string; endpointId: string }): Promise<PostResult> {
  const span = tracer.startSpan('POST', {
    kind: SpanKind.CLIENT,
    attributes: { [ATTR_HTTP_REQUEST_METHOD]: 'POST', 'malipo.webhook.event_id': ids.eventId, 'malipo.webhook.endpoint_id': ids.endpointId },
  });
  const headers = { ...req.headers };
  // W3C trace context is the only propagator registered (runtime/tracing.ts): `traceparent` and `tracestate`, no baggage.
  propagation.inject(trace.setSpan(context.active(), span), headers);
  try {
    const result = await postWebhook({ ...req, headers });
    if (result.status !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.status);
    if (result.status === null || result.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: result.status === null ? 'no response' : `HTTP ${result.status}` });
    return result;
  } finally {
    span.end();
  }
}
