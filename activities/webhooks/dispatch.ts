import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { findEvent } from '../../db/event-repo.js';
import { markEventDispatched, matchingEndpointIds, undispatchedEventIds } from '../../db/webhook-repo.js';
import type { Environment } from '../../domain/environment.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { taskQueueName } from '../../domain/task-queues.js';
import type { Config } from '../../runtime/config.js';
import type { webhookDelivery, webhookOutboxSweeper } from '../../workflows/index.js';

/** The outbox safety net picks up events this old whose dispatch never ran. */
export const sweepAfterSeconds = 60;
/** How often the sweeper looks (scaled like every webhook timer, but never below a second). */
const sweepIntervalMs = 30_000;
/** Workflow starts in flight at once when one event fans out to many endpoints. */
const startConcurrency = 16;

export const deliveryWorkflowId = (eventId: string, endpointId: string) => `webhook-delivery/${eventId}/${endpointId}`;

export function sweeperWorkflowId(config: Config): string {
  const prefix = config.temporal.taskQueuePrefix;
  return prefix ? `webhook-outbox-sweeper/${prefix}` : 'webhook-outbox-sweeper';
}

/**
 * Starts the delivery workflow of one event to one endpoint. The id names the pair and
 * REJECT_DUPLICATE keeps it unique even after the workflow closed, so a repeated dispatch (an
 * activity retry, the sweeper racing the workflow) starts nothing new. Returns whether it started.
 */
export async function startDelivery(
  deps: { temporal: Client; config: Config },
  event: { id: string; storeId: string; environment: Environment },
  endpointId: string,
): Promise<boolean> {
  try {
    await deps.temporal.workflow.start<typeof webhookDelivery>('webhookDelivery', {
      workflowId: deliveryWorkflowId(event.id, endpointId),
      taskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'webhooks'),
      args: [{ eventId: event.id, endpointId, delayScale: deps.config.webhooks.retryScale }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [
        { key: searchAttributes.store, value: event.storeId },
        { key: searchAttributes.environment, value: event.environment },
      ],
    });
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** Starts the outbox sweeper unless it runs already. Safe to call from every process at boot. */
export async function ensureOutboxSweeper(deps: { temporal: Client; config: Config }): Promise<void> {
  await deps.temporal.workflow.start<typeof webhookOutboxSweeper>('webhookOutboxSweeper', {
    workflowId: sweeperWorkflowId(deps.config),
    taskQueue: taskQueueName(deps.config.temporal.taskQueuePrefix, 'webhooks'),
    args: [{ intervalMs: Math.max(1000, Math.round(sweepIntervalMs * deps.config.webhooks.retryScale)) }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

export function createDispatchActivities(deps: { pool: DatabasePool; temporal: Client; config: Config }) {
  let sweeperEnsured: Promise<void> | undefined;

  async function dispatchEvent(input: { eventId: string }): Promise<{ endpoints: number; started: number }> {
    // Once per worker process: the first dispatch also makes sure the safety net runs.
    sweeperEnsured ??= ensureOutboxSweeper(deps).catch(() => {
      sweeperEnsured = undefined;
    });
    const event = await findEvent(deps.pool, input.eventId);
    // The caller commits the event before dispatching; a missing one is retried, not dropped.
    if (!event) throw new Error(`event ${input.eventId} is not in the outbox (yet)`);
    const endpointIds = await matchingEndpointIds(deps.pool, event, event.type);
    let started = 0;
    for (let i = 0; i < endpointIds.length; i += startConcurrency) {
      const batch = endpointIds.slice(i, i + startConcurrency);
      const results = await Promise.all(batch.map((id) => startDelivery(deps, event, id)));
      started += results.filter(Boolean).length;
    }
    await markEventDispatched(deps.pool, event.id);
    return { endpoints: endpointIds.length, started };
  }

  return {
    /**
     * Fans one outbox event out to every matching endpoint (enabled, same store and
     * environment, subscribed to the type), one delivery workflow each, then marks it dispatched.
     */
    dispatchEvent,

    /** The safety net: dispatches events committed over a minute ago whose dispatch never ran. */
    async sweepOutbox(): Promise<{ dispatched: number }> {
      const ids = await undispatchedEventIds(deps.pool, sweepAfterSeconds, 100);
      for (const eventId of ids) await dispatchEvent({ eventId });
      return { dispatched: ids.length };
    },
  };
}
