import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import type { Environment } from '../domain/environment.js';
import type { UsdtRail } from '../domain/rails.js';
import { searchAttributes } from '../domain/search-attributes.js';
import {
  chainWatcherWorkflowId,
  deliveryWorkflowId,
  reconcilerWorkflowId,
  mpesaPullWorkflowId,
  requestWorkflowId,
  sweeperWorkflowId,
  workflowTypes,
  type ChainWatcherInput,
  type PaymentLinkInput,
  type ReconcilerInput,
  type MpesaPullInput,
  type WebhookDeliveryInput,
  type WebhookDeliveryResult,
} from '../domain/workflow-contract.js';
import { correlationMemoKey } from '../domain/correlation.js';
import { linkStateMemo, linkSummary } from '../domain/link-display.js';
import { queueOf, type TemporalTarget } from './target.js';

/**
 * Starts a payment link's (or invoice's) workflow. Its id is unique for good: a second start
 * (an API retry, a process that died after starting it) finds it started and returns false.
 */
export async function startPaymentRequest(
  target: TemporalTarget,
  request: { kind: 'payment_link' | 'invoice'; merchantRef: string | null; correlationId: string | null },
  input: PaymentLinkInput,
): Promise<boolean> {
  try {
    await target.client.workflow.start(request.kind === 'invoice' ? workflowTypes.invoice : workflowTypes.paymentLink, {
      workflowId: requestWorkflowId(request.kind, input.linkId),
      taskQueue: queueOf(target, 'payments'),
      args: [input] satisfies [PaymentLinkInput],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      // Shown in the Temporal UI: the summary (ids and amounts, never a phone number or an address),
      // the state the workflow keeps current (domain/link-display.ts) and the correlation id, which
      // its activities log and tag their spans with (docs/tracing.md).
      staticSummary: linkSummary(request.kind, input),
      memo: {
        ...linkStateMemo('PENDING', input.expiresAtMs, input.expiresAtMs + input.lateWatchMinutes * 60_000),
        ...(request.correlationId ? { [correlationMemoKey]: request.correlationId } : {}),
      },
      typedSearchAttributes: [
        { key: searchAttributes.status, value: 'PENDING' },
        { key: searchAttributes.store, value: input.storeId },
        { key: searchAttributes.environment, value: input.environment },
        ...(request.merchantRef ? [{ key: searchAttributes.merchantRef, value: request.merchantRef.slice(0, 200) }] : []),
      ],
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** Starts the watcher of a rail in an environment unless it runs already. */
export async function ensureChainWatcher(target: TemporalTarget, rail: UsdtRail, env: Environment, pollMs: number): Promise<void> {
  try {
    await target.client.workflow.start(workflowTypes.chainWatcher, {
      workflowId: chainWatcherWorkflowId(rail, env, target.taskQueuePrefix),
      taskQueue: queueOf(target, 'chains'),
      args: [{ rail, environment: env, cursor: null, pollMs }] satisfies [ChainWatcherInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
      typedSearchAttributes: [
        { key: searchAttributes.rail, value: rail },
        { key: searchAttributes.environment, value: env },
      ],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

type EventRef = { id: string; storeId: string; environment: Environment };

/**
 * Starts the delivery workflow of one event to one endpoint. REJECT_DUPLICATE keeps the pair
 * unique even after the workflow closed, so a repeated dispatch (an activity retry, the sweeper
 * racing the workflow) starts nothing new. Returns whether it started.
 */
export async function startDelivery(target: TemporalTarget, event: EventRef, endpointId: string, delayScale: number, firstDeliveryId?: string): Promise<boolean> {
  try {
    await target.client.workflow.start(workflowTypes.webhookDelivery, {
      workflowId: deliveryWorkflowId(event.id, endpointId),
      taskQueue: queueOf(target, 'webhooks'),
      args: [{ eventId: event.id, endpointId, delayScale, ...(firstDeliveryId ? { firstDeliveryId } : {}) }] satisfies [WebhookDeliveryInput],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: deliveryAttributes(event),
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** A one-attempt run of the delivery workflow (a merchant's manual retry); resolves with its outcome. */
export async function runManualDelivery(target: TemporalTarget, event: EventRef, endpointId: string, deliveryId: string): Promise<WebhookDeliveryResult> {
  const handle = await target.client.workflow.start(workflowTypes.webhookDelivery, {
    workflowId: `${deliveryWorkflowId(event.id, endpointId)}/manual/${deliveryId}`,
    taskQueue: queueOf(target, 'webhooks'),
    args: [{ eventId: event.id, endpointId, delayScale: 1, manualDeliveryId: deliveryId }] satisfies [WebhookDeliveryInput],
    typedSearchAttributes: deliveryAttributes(event),
  });
  return (await handle.result()) as WebhookDeliveryResult;
}

/** Starts the outbox sweeper unless it runs already. Safe to call from every process at boot. */
export async function ensureOutboxSweeper(target: TemporalTarget, intervalMs: number): Promise<void> {
  await target.client.workflow.start(workflowTypes.webhookOutboxSweeper, {
    workflowId: sweeperWorkflowId(target.taskQueuePrefix),
    taskQueue: queueOf(target, 'webhooks'),
    args: [{ intervalMs }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/** Starts the scheduled M-Pesa pull unless it runs already. Safe to call from every worker process at boot. */
export async function ensureMpesaPullWorkflow(target: TemporalTarget, everyMs: number): Promise<void> {
  await target.client.workflow.start(workflowTypes.mpesaPull, {
    workflowId: mpesaPullWorkflowId(target.taskQueuePrefix),
    taskQueue: queueOf(target, 'payments'),
    args: [{ everyMs }] satisfies [MpesaPullInput],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

/** Starts the reconciler unless it runs already. Safe to call from every worker process at boot. */
export async function ensureReconcilerWorkflow(target: TemporalTarget, everyMs: number): Promise<void> {
  await target.client.workflow.start(workflowTypes.reconciler, {
    workflowId: reconcilerWorkflowId(target.taskQueuePrefix),
    taskQueue: queueOf(target, 'chains'),
    args: [{ everyMs }] satisfies [ReconcilerInput],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

function deliveryAttributes(event: EventRef) {
  return [
    { key: searchAttributes.store, value: event.storeId },
    { key: searchAttributes.environment, value: event.environment },
  ];
}
