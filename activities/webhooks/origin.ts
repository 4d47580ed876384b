import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import type { EventOrigin } from '../../db/event-repo.js';
import { activityCorrelation } from '../../temporal-client/correlation.js';

/**
 * Where the event being written comes from, for whoever dispatches it later in another process
 * (the outbox relay): the running activity's correlation id and, with tracing on, its span's W3C
 * trace context. Undefined when there is neither.
 */
export function eventOrigin(): EventOrigin | undefined {
  const carrier: Record<string, string> = {};
  // W3C trace context is the only propagator registered (runtime/tracing.ts); without tracing this writes nothing.
  propagation.inject(context.active(), carrier);
  const correlationId = activityCorrelation.getStore();
  const origin: EventOrigin = {
    ...(correlationId ? { correlationId } : {}),
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
  return Object.keys(origin).length > 0 ? origin : undefined;
}

/**
 * Runs `work` as if in the activity that wrote the event: under its correlation id (log lines,
 * the memo of a workflow started) and its trace context (the webhook POST's span is its child).
 */
export function underOrigin<T>(origin: EventOrigin | undefined, work: () => Promise<T>): Promise<T> {
  if (!origin) return work();
  const traced = origin.traceparent ? propagation.extract(ROOT_CONTEXT, origin) : context.active();
  return context.with(traced, () => (origin.correlationId ? activityCorrelation.run(origin.correlationId, work) : work()));
}
