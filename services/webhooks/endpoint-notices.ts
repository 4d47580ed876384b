import type { DatabasePool } from 'slonik';
import { findEvent, insertEvent } from '../../db/event-repo.js';
import { disableEndpoint, failureHistory, findEndpointById, type EndpointRow, type FailureHistory } from '../../db/webhook-repo.js';
import type { DeliveryExhaustedData, EndpointDisabledData } from '../../domain/webhooks/endpoint-notices.js';
import { isEndpointNotice } from '../../domain/webhooks/event-types.js';

/**
 * Malipo disabling an endpoint, and a delivery running out of attempts, become events of the store
 * (`webhook_endpoint.disabled`, `webhook_delivery.exhausted`) for its other endpoints. Each is
 * written in the transaction that disables the endpoint, under a key derived from what happened,
 * so a retried activity finds it written and writes nothing twice; the fan-out leaves out the
 * endpoint the event is about. A failure to deliver one of these events raises none: no loop.
 */
export interface NoticeDeps {
  pool: DatabasePool;
  /** Hands a recorded event to the fan-out; the outbox sweep sends it within minutes if this fails. */
  announce?: (eventId: string) => Promise<unknown>;
}

/** What the delivery that failed was: an event at an endpoint. */
interface Failed {
  eventId: string;
  endpointId: string;
}

async function announce(deps: NoticeDeps, eventIds: readonly string[]): Promise<void> {
  for (const id of eventIds) await deps.announce?.(id).catch(() => undefined);
}

/** The type of the event whose delivery failed, or null when it raises no notice (it is one, or it is gone). */
async function noticeWorthy(deps: NoticeDeps, eventId: string): Promise<string | null> {
  const event = await findEvent(deps.pool, eventId);
  return event && !isEndpointNotice(event.type) ? event.type : null;
}

function disabledData(endpoint: EndpointRow, reason: EndpointDisabledData['reason'], failed: Failed & { eventType: string }, h: FailureHistory): EndpointDisabledData {
  return {
    endpointId: endpoint.id,
    url: endpoint.url,
    reason,
    description: endpoint.disabled_reason ?? '',
    disabledAt: endpoint.disabled_at ?? new Date().toISOString(),
    eventId: failed.eventId,
    eventType: failed.eventType,
    attempts: h.attempts,
    lastError: h.lastError,
    firstAttemptAt: h.firstAttemptAt,
  };
}

/**
 * An attempt answered 410: disables the endpoint and, when this disabled it, records its
 * `webhook_endpoint.disabled` in the same transaction. Returns whether this call disabled it.
 */
export async function disableGoneEndpoint(deps: NoticeDeps, failed: Failed & { deliveryId: string }, description: string): Promise<boolean> {
  const eventType = await noticeWorthy(deps, failed.eventId);
  const recorded = await deps.pool.transaction(async (tx) => {
    const endpoint = await disableEndpoint(tx, failed.endpointId, description);
    if (!endpoint) return null;
    if (!eventType) return { eventId: null };
    const h = await failureHistory(tx, failed.endpointId, failed.eventId);
    const event = await insertEvent(tx, {
      storeId: endpoint.store_id,
      environment: endpoint.environment,
      type: 'webhook_endpoint.disabled',
      dedupeKey: `webhook_endpoint.disabled:${endpoint.id}:${failed.deliveryId}`,
      createdAt: endpoint.disabled_at ?? new Date().toISOString(),
      data: disabledData(endpoint, 'gone', { ...failed, eventType }, h),
      aboutEndpointId: endpoint.id,
    });
    return { eventId: event.id };
  });
  if (recorded?.eventId) await announce(deps, [recorded.eventId]);
  return recorded !== null;
}

/**
 * A delivery ran out of attempts: records its `webhook_delivery.exhausted`, and if nothing at all
 * reached the endpoint since the event's first attempt, disables it (with its
 * `webhook_endpoint.disabled`), all in one transaction. `disabled`: nothing reached the endpoint, so it is disabled.
 */
export async function concludeExhausted(deps: NoticeDeps, failed: Failed): Promise<{ disabled: boolean }> {
  const eventType = await noticeWorthy(deps, failed.eventId);
  const outcome = await deps.pool.transaction(async (tx) => {
    const h = await failureHistory(tx, failed.endpointId, failed.eventId);
    const failing = h.attempts > 0 && !h.succeededSince;
    const disabled = failing
      ? await disableEndpoint(tx, failed.endpointId,
        `Disabled automatically on ${new Date().toISOString()}: no delivery succeeded since ${h.firstAttemptAt} ` +
          `(${h.attempts} attempts of event ${failed.eventId}; last error: ${h.lastError ?? 'unknown'}). ` +
          'Fix the endpoint, enable it again, then send failed events again from the delivery log.')
      : null;
    const endpoint = disabled ?? (await findEndpointById(tx, failed.endpointId));
    // Deleted meanwhile (with its store, maybe): there is nobody left to tell.
    if (!endpoint || !eventType) return { failing, eventIds: [] };
    const scope = { storeId: endpoint.store_id, environment: endpoint.environment, aboutEndpointId: endpoint.id };
    const exhausted: DeliveryExhaustedData = {
      endpointId: endpoint.id, url: endpoint.url, eventId: failed.eventId, eventType, attempts: h.attempts, lastError: h.lastError,
      lastDeliveryId: h.lastDeliveryId, firstAttemptAt: h.firstAttemptAt, lastAttemptAt: h.lastAttemptAt, endpointDisabled: failing,
    };
    const events = [await insertEvent(tx, {
      ...scope, type: 'webhook_delivery.exhausted', dedupeKey: `webhook_delivery.exhausted:${failed.eventId}:${endpoint.id}`,
      createdAt: h.lastAttemptAt ?? new Date().toISOString(), data: exhausted,
    })];
    if (disabled) {
      events.push(await insertEvent(tx, {
        ...scope, type: 'webhook_endpoint.disabled', dedupeKey: `webhook_endpoint.disabled:${endpoint.id}:exhausted:${failed.eventId}`,
        createdAt: disabled.disabled_at ?? new Date().toISOString(), data: disabledData(disabled, 'failing', { ...failed, eventType }, h),
      }));
    }
    return { failing, eventIds: events.map((e) => e.id) };
  });
  await announce(deps, outcome.eventIds);
  return { disabled: outcome.failing };
}
