import {
  defaultPayloadConverter,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type GetLogAttributesInput,
  type Headers,
  type LocalActivityInput,
  type Next,
  type WorkflowInterceptorsFactory,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { correlationHeader, correlationMemoKey } from '../domain/correlation.js';

/**
 * The correlation id (domain/correlation.ts) leaves the workflow's memo with everything the
 * workflow asks for: each activity gets it in a header (the worker's activity interceptor logs it
 * and tags the activity's span), the workflow's own log lines carry it, and a run that continues
 * as new keeps the memo. Headers and log attributes are not part of what a replay compares, so
 * histories recorded without this module replay with it.
 */
function correlationId(): string | undefined {
  const value = workflowInfo().memo?.[correlationMemoKey];
  return typeof value === 'string' ? value : undefined;
}

function withHeader(headers: Headers): Headers {
  const id = correlationId();
  return id ? { ...headers, [correlationHeader]: defaultPayloadConverter.toPayload(id) } : headers;
}

class CorrelationOutbound implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return next({ ...input, headers: withHeader(input.headers) });
  }

  scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>) {
    return next({ ...input, headers: withHeader(input.headers) });
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    const memo = input.options.memo ?? workflowInfo().memo;
    return next({ ...input, options: { ...input.options, ...(memo ? { memo } : {}) } });
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>) {
    const id = correlationId();
    return next(id ? { ...input, correlationId: id } : input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ outbound: [new CorrelationOutbound()] });
