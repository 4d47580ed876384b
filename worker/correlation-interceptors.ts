import { trace } from '@opentelemetry/api';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { correlationAttribute, correlationHeader } from '../domain/correlation.js';
import { activityCorrelation } from '../temporal-client/correlation.js';

/**
 * Reads the correlation id a workflow put in the activity's header (workflows/interceptors.ts):
 * every log line of the activity carries it as `correlationId`, its span (with tracing on) as
 * `malipo.correlation_id`, and a workflow it starts keeps it in its memo (temporal-client/correlation.ts).
 * Registered after OpenTelemetry's interceptor, so the activity's span is the active one here.
 */
export const correlationActivityInterceptor: ActivityInterceptorsFactory = () => {
  let id: string | undefined;
  return {
    inbound: {
      execute(input, next) {
        const header = input.headers[correlationHeader];
        id = header ? defaultPayloadConverter.fromPayload<string>(header) : undefined;
        if (!id) return next(input);
        trace.getActiveSpan()?.setAttribute(correlationAttribute, id);
        return activityCorrelation.run(id, () => next(input));
      },
    },
    outbound: {
      getLogAttributes: (attributes, next) => next(id ? { ...attributes, correlationId: id } : attributes),
    },
  };
};
