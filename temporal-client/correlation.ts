import { AsyncLocalStorage } from 'node:async_hooks';
import type { Next, WorkflowClientInterceptor, WorkflowStartInput } from '@temporalio/client';
import { correlationMemoKey } from '../domain/correlation.js';

/**
 * The correlation id of the activity running now (set by the worker's activity interceptor from
 * the task's header, worker/correlation-interceptors.ts): a workflow an activity starts, such as a
 * webhook's delivery workflow, carries it on in its memo.
 */
export const activityCorrelation = new AsyncLocalStorage<string>();

class CorrelationClientInterceptor implements WorkflowClientInterceptor {
  start(input: WorkflowStartInput, next: Next<WorkflowClientInterceptor, 'start'>): Promise<string> {
    const id = activityCorrelation.getStore();
    if (!id || input.options.memo?.[correlationMemoKey] !== undefined) return next(input);
    return next({ ...input, options: { ...input.options, memo: { ...input.options.memo, [correlationMemoKey]: id } } });
  }
}

/**
 * The interceptors of every Temporal client the service makes: the correlation id's, then
 * (with tracing on) OpenTelemetry's, which put the caller's trace context in the headers.
 */
export function clientInterceptors(tracing?: { workflow: WorkflowClientInterceptor[] }): { workflow: WorkflowClientInterceptor[] } {
  return { workflow: [new CorrelationClientInterceptor(), ...(tracing?.workflow ?? [])] };
}
