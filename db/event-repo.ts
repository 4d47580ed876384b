import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import { newId } from '../domain/ids.js';

export type EventType =
  | 'payment_link.confirmed' | 'transfer.confirmed' | 'invoice.paid' | 'reconciliation.mismatch'
  | 'webhook_endpoint.disabled' | 'webhook_delivery.exhausted' | 'webhook_endpoint.tested' | 'mobile_money.unallocated'
  | 'sweep.completed' | 'sweep.failed';

export interface StoredEvent {
  id: string;
  storeId: string;
  environment: Environment;
  type: EventType;
  createdAt: string;
  payload: { id: string; type: EventType; createdAt: string; environment: Environment; data: unknown };
}

const eventRow = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: z.enum(['test', 'live']),
  type: z.string(),
  created_at: z.string(),
  payload: z.any(),
});

/**
 * Writes an event into the outbox, inside the caller's transaction. `dedupeKey` makes it
 * idempotent: a retried activity gets the event written the first time, with the same id.
 * `aboutEndpointId`: the webhook endpoint the event is about, which the fan-out leaves out.
 */
export async function insertEvent(
  db: CommonQueryMethods,
  e: { storeId: string; environment: Environment; type: EventType; dedupeKey: string; data: unknown; createdAt: string; aboutEndpointId?: string },
): Promise<StoredEvent> {
  const existing = await findEventByDedupeKey(db, e.dedupeKey);
  if (existing) return existing;
  const id = newId('event');
  const payload = { id, type: e.type, createdAt: e.createdAt, environment: e.environment, data: e.data };
  await db.query(sql.unsafe`
    INSERT INTO events (id, store_id, environment, type, dedupe_key, payload, created_at, about_endpoint_id)
    VALUES (${id}, ${e.storeId}, ${e.environment}, ${e.type}, ${e.dedupeKey}, ${sql.jsonb(payload as never)}, ${e.createdAt}, ${e.aboutEndpointId ?? null})
    ON CONFLICT (dedupe_key) DO NOTHING`);
  return (await findEventByDedupeKey(db, e.dedupeKey))!;
}

export async function findEventByDedupeKey(db: CommonQueryMethods, dedupeKey: string): Promise<StoredEvent | null> {
  const row = await db.maybeOne(sql.type(eventRow)`SELECT id, store_id, environment, type, created_at, payload FROM events WHERE dedupe_key = ${dedupeKey}`);
  return row ? toEvent(row) : null;
}

export async function findEvent(db: CommonQueryMethods, id: string): Promise<StoredEvent | null> {
  const row = await db.maybeOne(sql.type(eventRow)`SELECT id, store_id, environment, type, created_at, payload FROM events WHERE id = ${id}`);
  return row ? toEvent(row) : null;
}

function toEvent(row: z.infer<typeof eventRow>): StoredEvent {
  return {
    id: row.id,
    storeId: row.store_id,
    environment: row.environment,
    type: row.type as EventType,
    createdAt: row.created_at,
    payload: row.payload,
  };
}

/**
 * Writes an event meant for one endpoint only (a test event), already marked dispatched so the
 * outbox sweeper never fans it out. Its id is chosen by the caller (reserved on an
 * Idempotency-Key, or derived from the dashboard form), so a repeated request finds the event it
 * wrote the first time. Returns the stored event, which may be an older one with that id.
 */
export async function insertDirectedEvent(
  db: CommonQueryMethods,
  e: { id: string; storeId: string; environment: Environment; type: EventType; data: unknown; createdAt: string },
): Promise<StoredEvent> {
  const payload = { id: e.id, type: e.type, createdAt: e.createdAt, environment: e.environment, data: e.data };
  await db.query(sql.unsafe`
    INSERT INTO events (id, store_id, environment, type, dedupe_key, payload, created_at, dispatched_at)
    VALUES (${e.id}, ${e.storeId}, ${e.environment}, ${e.type}, ${`directed:${e.id}`}, ${sql.jsonb(payload as never)}, ${e.createdAt}, now())
    ON CONFLICT DO NOTHING`);
  return (await findEvent(db, e.id))!;
}

/** The payloads of some of a store's events in one environment (the delivery log shows them). */
export async function findStoreEvents(db: CommonQueryMethods, scope: { storeId: string; environment: Environment }, ids: readonly string[]): Promise<StoredEvent[]> {
  if (ids.length === 0) return [];
  const rows = await db.any(sql.type(eventRow)`
    SELECT id, store_id, environment, type, created_at, payload FROM events
    WHERE id = ANY(${sql.array([...ids], 'text')}) AND store_id = ${scope.storeId} AND environment = ${scope.environment}`);
  return rows.map(toEvent);
}

/**
 * The scope's `webhook_delivery.exhausted` events, newest first, leaving out those whose event has
 * since reached the endpoint (sent again by hand) and those of deleted endpoints.
 */
export async function openDeliveryExhaustions(db: CommonQueryMethods, scope: { storeId: string; environment: Environment }, limit: number): Promise<StoredEvent[]> {
  const rows = await db.any(sql.type(eventRow)`
    SELECT e.id, e.store_id, e.environment, e.type, e.created_at, e.payload FROM events e
    WHERE e.store_id = ${scope.storeId} AND e.environment = ${scope.environment} AND e.type = 'webhook_delivery.exhausted'
      AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = e.about_endpoint_id)
      AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
        WHERE d.event_id = e.payload->'data'->>'eventId' AND d.endpoint_id = e.about_endpoint_id AND d.status = 'succeeded')
    ORDER BY e.created_at DESC LIMIT ${limit}`);
  return rows.map(toEvent);
}
