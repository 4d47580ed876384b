import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';
import { newId } from '../domain/ids.js';

export type EventType =
  | 'payment_link.confirmed' | 'transfer.confirmed' | 'invoice.paid' | 'reconciliation.mismatch'
  | 'webhook_endpoint.disabled' | 'webhook_delivery.exhausted' | 'webhook_endpoint.tested' | 'mobile_money.unallocated'
  | 'sweep.completed' | 'sweep.failed';

/** Where an event was written from (migration 0047): the correlation id and the W3C trace context of its writer. */
export interface EventOrigin {
  correlationId?: string;
  traceparent?: string;
  tracestate?: string;
}

export interface StoredEvent {
  id: string;
  storeId: string;
  environment: Environment;
  type: EventType;
  createdAt: string;
  payload: { id: string; type: EventType; createdAt: string; environment: Environment; data: unknown };
  /** Undefined for events written without one (and by code from before migration 0047). */
  origin?: EventOrigin;
}

const eventRow = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: z.enum(['test', 'live']),
  type: z.string(),
  created_at: z.string(),
  payload: z.any(),
  origin: z.object({ correlationId: z.string().optional(), traceparent: z.string().optional(), tracestate: z.string().optional() }).nullable().optional(),
});

/** The columns every read of an event returns (eventRow). */
const eventColumns = sql.fragment`id, store_id, environment, type, created_at, payload, origin`;

/**
 * Writes an event into the outbox, inside the caller's transaction. `dedupeKey` makes it
 * idempotent: a retried activity gets the event written the first time, with the same id.
 * `aboutEndpointId`: the webhook endpoint the event is about, which the fan-out leaves out.
 */
export async function insertEvent(
  db: CommonQueryMethods,
  e: { storeId: string; environment: Environment; type: EventType; dedupeKey: string; data: unknown; createdAt: string; aboutEndpointId?: string; origin?: EventOrigin },
): Promise<StoredEvent> {
  const id = newId('event');
  const payload = { id, type: e.type, createdAt: e.createdAt, environment: e.environment, data: e.data };
  // One statement when the event is new (every confirmation's path); a repeat finds the first one's row.
  const written = await db.maybeOne(sql.type(eventRow)`
    INSERT INTO events (id, store_id, environment, type, dedupe_key, payload, created_at, about_endpoint_id, origin)
    VALUES (${id}, ${e.storeId}, ${e.environment}, ${e.type}, ${e.dedupeKey}, ${sql.jsonb(payload as never)}, ${e.createdAt}, ${e.aboutEndpointId ?? null},
      ${e.origin ? sql.jsonb(e.origin as never) : null})
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING ${eventColumns}`);
  return written ? toEvent(written) : (await findEventByDedupeKey(db, e.dedupeKey))!;
}

export async function findEventByDedupeKey(db: CommonQueryMethods, dedupeKey: string): Promise<StoredEvent | null> {
  const row = await db.maybeOne(sql.type(eventRow)`SELECT ${eventColumns} FROM events WHERE dedupe_key = ${dedupeKey}`);
  return row ? toEvent(row) : null;
}

export async function findEvent(db: CommonQueryMethods, id: string): Promise<StoredEvent | null> {
  const row = await db.maybeOne(sql.type(eventRow)`SELECT ${eventColumns} FROM events WHERE id = ${id}`);
  return row ? toEvent(row) : null;
}

/**
 * Claims for `leaseSeconds` up to `limit` events not yet dispatched and not claimed now, oldest
 * written first (`recorded_at`; with `olderThanSeconds`, only those written that long ago), and
 * returns them. Rows another transaction is claiming are skipped, never waited for, so
 * dispatchers running at once split the outbox between them. A claim lapses on its own: an event
 * whose dispatcher died is claimed again when its lease ends.
 */
export async function claimEvents(
  db: CommonQueryMethods,
  opts: { limit: number; leaseSeconds: number; olderThanSeconds?: number },
): Promise<StoredEvent[]> {
  const age = opts.olderThanSeconds === undefined ? sql.fragment`` : sql.fragment`AND recorded_at < now() - make_interval(secs => ${opts.olderThanSeconds})`;
  const rows = await db.any(sql.type(eventRow)`
    UPDATE events e SET dispatch_claimed_until = now() + make_interval(secs => ${opts.leaseSeconds})
    FROM (
      SELECT id FROM events
      WHERE dispatched_at IS NULL AND (dispatch_claimed_until IS NULL OR dispatch_claimed_until < now()) ${age}
      ORDER BY recorded_at LIMIT ${opts.limit} FOR UPDATE SKIP LOCKED
    ) c
    WHERE e.id = c.id
    RETURNING e.id, e.store_id, e.environment, e.type, e.created_at, e.payload, e.origin`);
  return rows.map(toEvent);
}

/**
 * Claims one event for `leaseSeconds` (a caller dispatching the event it just wrote): `claimed`
 * with the event, and whether it was dispatched already (a fan-out run again then settles what it
 * logged and leaves the rest to delivery workflows, sending nothing twice); `taken` while another
 * dispatcher's claim on it holds; `missing` when no such event is written (yet).
 */
export async function claimEvent(
  db: CommonQueryMethods,
  id: string,
  leaseSeconds: number,
): Promise<{ status: 'claimed'; event: StoredEvent; dispatched: boolean } | { status: 'taken' | 'missing' }> {
  const row = await db.maybeOne(sql.type(claimedRow)`
    UPDATE events SET dispatch_claimed_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE id = ${id} AND (dispatched_at IS NOT NULL OR dispatch_claimed_until IS NULL OR dispatch_claimed_until < now())
    RETURNING ${eventColumns}, dispatched_at IS NOT NULL AS dispatched`);
  if (row) return { status: 'claimed', event: toEvent(row), dispatched: row.dispatched };
  return (await findEvent(db, id)) ? { status: 'taken' } : { status: 'missing' };
}

/**
 * Extends the claims of events a dispatcher is still fanning out (those not dispatched yet) by
 * `leaseSeconds` from now: a fan-out that outlives a lease (Temporal slow to start its retry
 * workflows, a stalled pool) keeps its events, so no other dispatcher sends them meanwhile.
 */
export async function renewEventClaims(db: CommonQueryMethods, ids: readonly string[], leaseSeconds: number): Promise<void> {
  if (ids.length === 0) return;
  await db.query(sql.unsafe`
    UPDATE events SET dispatch_claimed_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE id = ANY(${sql.array([...ids], 'text')}) AND dispatched_at IS NULL`);
}

/**
 * How many events written over `olderThanSeconds` ago are not dispatched yet, and the age of the
 * oldest in seconds (0 when none): read from the outbox's partial index of undispatched rows.
 */
export async function undispatchedBacklog(db: CommonQueryMethods, olderThanSeconds: number): Promise<{ count: number; oldestSeconds: number }> {
  const row = await db.one(sql.type(z.object({ n: z.number(), oldest: z.number() }))`
    SELECT count(*)::int AS n, COALESCE(EXTRACT(EPOCH FROM now() - min(recorded_at)), 0)::float8 AS oldest
    FROM events WHERE dispatched_at IS NULL AND recorded_at < now() - make_interval(secs => ${olderThanSeconds})`);
  return { count: row.n, oldestSeconds: row.oldest };
}

const claimedRow = eventRow.extend({ dispatched: z.boolean() });

function toEvent(row: z.infer<typeof eventRow>): StoredEvent {
  return {
    id: row.id,
    storeId: row.store_id,
    environment: row.environment,
    type: row.type as EventType,
    createdAt: row.created_at,
    payload: row.payload,
    ...(row.origin ? { origin: row.origin } : {}),
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
    SELECT ${eventColumns} FROM events
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
