import { trace } from '@opentelemetry/api';
import {
  workflowInfo,
  type Next,
  type SignalInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { correlationAttribute, correlationMemoKey } from '../domain/correlation.js';

/**
 * Bundled only when tracing is on (worker/worker.ts), after OpenTelemetry's workflow
 * interceptors: the RunWorkflow, HandleSignal and HandleUpdate spans they open are the active
 * span here, and get the workflow's correlation id as `malipo.correlation_id`.
 */
function tagActiveSpan(): void {
  const id = workflowInfo().memo?.[correlationMemoKey];
  if (typeof id === 'string') trace.getActiveSpan()?.setAttribute(correlationAttribute, id);
}

class CorrelationSpanInbound implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    tagActiveSpan();
    return next(input);
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
    tagActiveSpan();
    return next(input);
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    tagActiveSpan();
    return next(input);
  }
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ inbound: [new CorrelationSpanInbound()] });
