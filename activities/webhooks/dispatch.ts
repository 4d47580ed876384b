import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { findEvent } from '../../db/event-repo.js';
import { markEventDispatched, matchingEndpointIds, undispatchedEventIds } from '../../db/webhook-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { ServiceSettings } from '../../services/settings.js';
import { ensureWebhookSweeper } from '../../services/webhooks/endpoints.js';
import { startDelivery as startDeliveryWorkflow, targetOf } from '../../temporal-client/index.js';

/** The outbox safety net picks up events this old whose dispatch never ran. */
export const sweepAfterSeconds = 60;
/** Workflow starts in flight at once when one event fans out to many endpoints. */
const startConcurrency = 16;

/** Starts the delivery workflow of one event to one endpoint; false when it ran already. */
export function startDelivery(
  deps: { temporal: Client; config: ServiceSettings },
  event: { id: string; storeId: string; environment: Environment },
  endpointId: string,
): Promise<boolean> {
  return startDeliveryWorkflow(targetOf(deps), event, endpointId, deps.config.webhooks.retryScale);
}


export function createDispatchActivities(deps: { pool: DatabasePool; temporal: Client; config: ServiceSettings }) {
  let sweeperEnsured: Promise<void> | undefined;

  async function dispatchEvent(input: { eventId: string }): Promise<{ endpoints: number; started: number }> {
    // Once per worker process: the first dispatch also makes sure the safety net runs.
    sweeperEnsured ??= ensureWebhookSweeper(deps).catch(() => {
      sweeperEnsured = undefined;
    });
    const event = await findEvent(deps.pool, input.eventId);
    // The caller commits the event before dispatching; a missing one is retried, not dropped.
    if (!event) throw new Error(`event ${input.eventId} is not in the outbox (yet)`);
    const endpointIds = await matchingEndpointIds(deps.pool, event);
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
