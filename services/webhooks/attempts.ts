import { ForeignKeyIntegrityConstraintViolationError, UniqueIntegrityConstraintViolationError, type DatabasePool } from 'slonik';
import { recordDeliveries, recordDelivery, type DeliveryRow, type NewDelivery } from '../../db/webhook-repo.js';
import { derivedId } from '../../domain/ids.js';
import { disableGoneEndpoint, type NoticeDeps } from './endpoint-notices.js';
import type { PostResult } from './http-post.js';

/**
 * The webhook service's rules for one attempt of an event at an endpoint: what is logged (a 2xx
 * succeeded, anything else failed with the reason), and what an answer means (a 410 disables the
 * endpoint). The activities (activities/webhooks/) send the request and call these.
 */

export interface DeliverAttemptInput {
  eventId: string;
  endpointId: string;
  /** Chosen before the attempt: the activity's idempotency key and the log row's id. */
  deliveryId: string;
  trigger: 'automatic' | 'manual';
}

/** `endpoint_gone`: it answered 410 and is now disabled; `endpoint_unavailable`: deleted (with its store, maybe) or disabled before the attempt. */
export type AttemptOutcome = 'succeeded' | 'failed' | 'endpoint_gone' | 'endpoint_unavailable';

export interface DeliverAttemptResult {
  outcome: AttemptOutcome;
  deliveryId: string;
  responseStatus: number | null;
}

/**
 * The id of an event's first attempt at an endpoint, the same wherever it is made (inline by the
 * dispatch, or by the delivery workflow): whichever runs second finds the first one's log row and
 * sends nothing.
 */
export function firstDeliveryId(eventId: string, endpointId: string): string {
  return derivedId('webhookDelivery', `first-attempt:${eventId}:${endpointId}`);
}

/** What the log says of an attempt: 2xx succeeded, anything else failed, with why. */
function logRow(input: DeliverAttemptInput, r: PostResult, startedAt: Date): NewDelivery {
  const ok = r.status !== null && r.status >= 200 && r.status < 300;
  return {
    id: input.deliveryId,
    endpointId: input.endpointId,
    eventId: input.eventId,
    trigger: input.trigger,
    status: ok ? 'succeeded' : 'failed',
    responseStatus: r.status,
    latencyMs: r.latencyMs,
    responseBody: r.body,
    error: ok ? null : (r.error ?? httpError(r)),
    startedAt: startedAt.toISOString(),
  };
}

/** Logs an attempt under its delivery id (2xx succeeded, anything else failed, with why); null when the endpoint (or its store) was deleted while it ran. */
export async function recordAttempt(pool: DatabasePool, input: DeliverAttemptInput, r: PostResult, startedAt: Date): Promise<DeliveryRow | null> {
  try {
    return await recordDelivery(pool, logRow(input, r, startedAt));
  } catch (err) {
    if (err instanceof ForeignKeyIntegrityConstraintViolationError) return null;
    throw err;
  }
}

/** An attempt made and not logged yet. */
export interface SentAttempt {
  input: DeliverAttemptInput;
  result: PostResult;
  startedAt: Date;
}

/**
 * Logs the attempts of one fan-out in one statement, in their order (a statement per attempt was
 * most of a fan-out's database work). One the statement did not log (its endpoint deleted
 * meanwhile, a race for its ordinal) is logged alone, as `recordAttempt` does: null when its
 * endpoint is gone.
 */
export async function recordAttempts(pool: DatabasePool, sent: readonly SentAttempt[]): Promise<Array<DeliveryRow | null>> {
  let rows: readonly DeliveryRow[] = [];
  try {
    rows = await recordDeliveries(pool, sent.map((s) => logRow(s.input, s.result, s.startedAt)));
  } catch (err) {
    if (!(err instanceof ForeignKeyIntegrityConstraintViolationError || err instanceof UniqueIntegrityConstraintViolationError)) throw err;
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  return Promise.all(sent.map((s) => byId.get(s.input.deliveryId) ?? recordAttempt(pool, s.input, s.result, s.startedAt)));
}

/** Settles a logged attempt by the webhook rules: a 410 disables the endpoint (and tells the store's other endpoints, once). */
export async function settleAttempt(deps: NoticeDeps, row: DeliveryRow): Promise<DeliverAttemptResult> {
  const gone = row.response_status === 410;
  if (gone) {
    await disableGoneEndpoint(deps, { eventId: row.event_id, endpointId: row.endpoint_id, deliveryId: row.id },
      `The endpoint answered 410 Gone on ${row.created_at} (event ${row.event_id}), so Malipo stopped sending to it. Enable it again once it accepts webhooks.`);
  }
  const outcome: AttemptOutcome = row.status === 'succeeded' ? 'succeeded' : gone ? 'endpoint_gone' : 'failed';
  return { outcome, deliveryId: row.id, responseStatus: row.response_status };
}

/** What the delivery log says of a failed HTTP answer. */
export function httpError(r: PostResult): string {
  if (r.status !== null && r.status >= 300 && r.status < 400) {
    // No Location from a private address: it is part of what that address answered.
    return `HTTP ${r.status} redirect${r.location ? ` to ${r.location.slice(0, 200)}` : ''} not followed; set the endpoint URL to the final address`;
  }
  if (r.status === 410) return 'HTTP 410 Gone: the endpoint is now disabled';
  return `HTTP ${r.status}`;
}
