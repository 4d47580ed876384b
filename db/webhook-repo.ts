import { sql, UniqueIntegrityConstraintViolationError, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * Webhook endpoints, their delivery log and the outbox's dispatch marks. Endpoint reads that
 * face the API are scoped by store and environment (404 across tenants); the delivery side reads
 * by id because it runs on behalf of an event that already names its store.
 */
const endpointRow = z.object({
  id: z.string(),
  store_id: z.string(),
  environment: z.enum(['test', 'live']),
  url: z.string(),
  enabled_events: z.array(z.string()),
  secret: z.string(),
  previous_secret: z.string().nullable(),
  previous_secret_expires_at: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  disabled_reason: z.string().nullable(),
  disabled_at: z.string().nullable(),
  created_at: z.string(),
});
export type EndpointRow = z.infer<typeof endpointRow>;

const deliveryRow = z.object({
  id: z.string(),
  endpoint_id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  attempt: z.number(),
  trigger: z.enum(['automatic', 'manual']),
  status: z.enum(['succeeded', 'failed']),
  response_status: z.number().nullable(),
  latency_ms: z.number().nullable(),
  response_body: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
});
export type DeliveryRow = z.infer<typeof deliveryRow>;

const endpointColumns = sql.fragment`id, store_id, environment, url, enabled_events, secret, previous_secret,
  previous_secret_expires_at, status, disabled_reason, disabled_at, created_at`;
const endpointColumnsOf = sql.fragment`w.id, w.store_id, w.environment, w.url, w.enabled_events, w.secret, w.previous_secret,
  w.previous_secret_expires_at, w.status, w.disabled_reason, w.disabled_at, w.created_at`;
const endpointOfEventRow = endpointRow.extend({ event_id: z.string() });
const deliveryColumns = sql.fragment`d.id, d.endpoint_id, d.event_id, e.type AS event_type, d.attempt, d.trigger, d.status,
  d.response_status, d.latency_ms, d.response_body, d.error, d.created_at`;

export interface Scope {
  storeId: string;
  environment: Environment;
}

/** Writes take ciphertexts only (`v1:…`): a `whsec_` plaintext reaching here is a bug, refused. */
function ciphertextOnly(value: string): string {
  if (!value.startsWith('v1:')) throw new Error('webhook secrets are stored encrypted (services/webhooks/secrets.ts), never in clear');
  return value;
}

/**
 * `id` is chosen by the caller because the secret's ciphertext is bound to it; `secret` is the
 * ciphertext (services/webhooks/secrets.ts), never the `whsec_` plaintext.
 */
export async function insertEndpoint(
  pool: DatabasePool,
  e: Scope & { id: string; url: string; enabledEvents: readonly string[]; secret: string },
): Promise<EndpointRow> {
  return pool.one(sql.type(endpointRow)`
    INSERT INTO webhook_endpoints (id, store_id, environment, url, enabled_events, secret)
    VALUES (${e.id}, ${e.storeId}, ${e.environment}, ${e.url}, ${sql.array([...e.enabledEvents], 'text')}, ${ciphertextOnly(e.secret)})
    RETURNING ${endpointColumns}`);
}

export async function countEndpoints(pool: DatabasePool, s: Scope): Promise<number> {
  return pool.oneFirst(sql.type(z.object({ n: z.number() }))`
    SELECT count(*)::int AS n FROM webhook_endpoints WHERE store_id = ${s.storeId} AND environment = ${s.environment}`);
}

export async function listEndpoints(pool: DatabasePool, s: Scope): Promise<readonly EndpointRow[]> {
  return pool.any(sql.type(endpointRow)`
    SELECT ${endpointColumns} FROM webhook_endpoints
    WHERE store_id = ${s.storeId} AND environment = ${s.environment} ORDER BY created_at DESC, id DESC`);
}

export async function findEndpoint(pool: CommonQueryMethods, s: Scope, id: string): Promise<EndpointRow | null> {
  return pool.maybeOne(sql.type(endpointRow)`
    SELECT ${endpointColumns} FROM webhook_endpoints
    WHERE id = ${id} AND store_id = ${s.storeId} AND environment = ${s.environment}`);
}

export async function findEndpointById(pool: CommonQueryMethods, id: string): Promise<EndpointRow | null> {
  return pool.maybeOne(sql.type(endpointRow)`SELECT ${endpointColumns} FROM webhook_endpoints WHERE id = ${id}`);
}

export async function deleteEndpoint(pool: DatabasePool, s: Scope, id: string): Promise<boolean> {
  const r = await pool.query(sql.unsafe`
    DELETE FROM webhook_endpoints WHERE id = ${id} AND store_id = ${s.storeId} AND environment = ${s.environment}`);
  return r.rowCount > 0;
}

/**
 * The current secret becomes the previous one and keeps signing for `overlapSeconds`; `secret`
 * is the new ciphertext. Under a row lock, `protect` turns the stored current value into the
 * previous one: a ciphertext moves as it is (same slot), a legacy plaintext gets encrypted.
 */
export async function rollEndpointSecret(
  pool: DatabasePool,
  s: Scope,
  id: string,
  secret: string,
  overlapSeconds: number,
  protect: (stored: string) => string,
): Promise<EndpointRow | null> {
  return pool.transaction(async (tx) => {
    const current = await tx.maybeOneFirst(sql.type(z.object({ secret: z.string() }))`
      SELECT secret FROM webhook_endpoints
      WHERE id = ${id} AND store_id = ${s.storeId} AND environment = ${s.environment} FOR UPDATE`);
    if (current === null) return null;
    return tx.one(sql.type(endpointRow)`
      UPDATE webhook_endpoints SET previous_secret = ${ciphertextOnly(protect(current))}, secret = ${ciphertextOnly(secret)},
        previous_secret_expires_at = now() + make_interval(secs => ${overlapSeconds})
      WHERE id = ${id} RETURNING ${endpointColumns}`);
  });
}

/** Every endpoint, for `credentials:reencrypt`. */
export async function listEndpointRefs(pool: DatabasePool): Promise<readonly { id: string; storeId: string; environment: Environment }[]> {
  const rows = await pool.any(sql.type(z.object({ id: z.string(), store_id: z.string(), environment: z.enum(['test', 'live']) }))`
    SELECT id, store_id, environment FROM webhook_endpoints ORDER BY created_at, id`);
  return rows.map((r) => ({ id: r.id, storeId: r.store_id, environment: r.environment }));
}

export interface StoredSecrets {
  secret: string;
  previousSecret: string | null;
  /** The previous secret's overlap is over: nothing signs with it any more. */
  previousExpired: boolean;
}

/**
 * Rewrites one endpoint's stored secrets under a row lock, so a concurrent roll waits and then
 * moves the rewritten value. `rewrite` returns null to leave the row alone; a previous secret set
 * to null loses its expiry too. Returns false when the endpoint no longer exists.
 */
export async function rewriteEndpointSecrets(
  pool: DatabasePool,
  id: string,
  rewrite: (stored: StoredSecrets) => { secret: string; previousSecret: string | null } | null,
): Promise<boolean> {
  return pool.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(z.object({ secret: z.string(), previous_secret: z.string().nullable(), previous_expired: z.boolean() }))`
      SELECT secret, previous_secret, COALESCE(previous_secret_expires_at <= now(), true) AS previous_expired
      FROM webhook_endpoints WHERE id = ${id} FOR UPDATE`);
    if (!row) return false;
    const next = rewrite({ secret: row.secret, previousSecret: row.previous_secret, previousExpired: row.previous_expired });
    if (!next) return true;
    await tx.query(sql.unsafe`
      UPDATE webhook_endpoints SET secret = ${ciphertextOnly(next.secret)},
        previous_secret = ${next.previousSecret === null ? null : ciphertextOnly(next.previousSecret)},
        previous_secret_expires_at = CASE WHEN ${next.previousSecret}::text IS NULL THEN NULL ELSE previous_secret_expires_at END
      WHERE id = ${id}`);
    return true;
  });
}

/** Disables an enabled endpoint; an already disabled one keeps its first reason. */
/** Disables an enabled endpoint with its reason: the row as disabled, or null when it was not enabled (nothing changed). */
export async function disableEndpoint(db: CommonQueryMethods, id: string, reason: string): Promise<EndpointRow | null> {
  return db.maybeOne(sql.type(endpointRow)`
    UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${reason}, disabled_at = now()
    WHERE id = ${id} AND status = 'enabled'
    RETURNING ${endpointColumns}`);
}

export async function enableEndpoint(pool: DatabasePool, s: Scope, id: string): Promise<EndpointRow | null> {
  return pool.maybeOne(sql.type(endpointRow)`
    UPDATE webhook_endpoints SET status = 'enabled', disabled_reason = NULL, disabled_at = NULL
    WHERE id = ${id} AND store_id = ${s.storeId} AND environment = ${s.environment}
    RETURNING ${endpointColumns}`);
}

/**
 * The endpoints an event goes to: enabled, same store and environment, subscribed to its type,
 * created before the event was recorded (however late the dispatch runs), and not the endpoint
 * the event is about (a `webhook_endpoint.disabled` never goes to the endpoint that failed).
 */
/**
 * The enabled endpoints each event goes to, for many events in one statement: same store and
 * environment, subscribed to the type, registered before the event was written, and not the
 * endpoint the event is about. Keyed by event id; an event with none is absent.
 */
export async function matchingEndpointsOf(db: CommonQueryMethods, eventIds: readonly string[]): Promise<ReadonlyMap<string, readonly EndpointRow[]>> {
  const out = new Map<string, EndpointRow[]>();
  if (eventIds.length === 0) return out;
  const rows = await db.any(sql.type(endpointOfEventRow)`
    SELECT e.id AS event_id, ${endpointColumnsOf} FROM events e
    JOIN webhook_endpoints w ON w.store_id = e.store_id AND w.environment = e.environment AND w.status = 'enabled'
      AND e.type = ANY(w.enabled_events) AND w.created_at <= e.recorded_at AND w.id IS DISTINCT FROM e.about_endpoint_id
    WHERE e.id = ANY(${sql.array([...eventIds], 'text')})
    ORDER BY e.id, w.created_at, w.id`);
  for (const { event_id, ...endpoint } of rows) {
    const list = out.get(event_id);
    if (list) list.push(endpoint);
    else out.set(event_id, [endpoint]);
  }
  return out;
}

export interface NewDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  trigger: 'automatic' | 'manual';
  status: 'succeeded' | 'failed';
  responseStatus: number | null;
  latencyMs: number | null;
  responseBody: string | null;
  error: string | null;
  startedAt: string;
}

/**
 * Logs one attempt under the id chosen before it was made: a retried activity finds its row
 * and changes nothing. `attempt` is the next ordinal for this event and endpoint; two attempts
 * racing for the same ordinal (a manual retry during an automatic one) make one try again.
 */
export async function recordDelivery(pool: DatabasePool, d: NewDelivery): Promise<DeliveryRow> {
  for (let tries = 0; ; tries++) {
    try {
      // One round trip: the new row comes back with its event's type; a retry's conflict reads the logged one.
      const inserted = await pool.maybeOne(sql.type(deliveryRow)`
        WITH d AS (
          INSERT INTO webhook_deliveries (id, endpoint_id, event_id, attempt, trigger, status, response_status, latency_ms,
            response_body, error, created_at)
          SELECT ${d.id}, ${d.endpointId}, ${d.eventId},
            COALESCE((SELECT max(attempt) FROM webhook_deliveries WHERE endpoint_id = ${d.endpointId} AND event_id = ${d.eventId}), 0) + 1,
            ${d.trigger}, ${d.status}, ${d.responseStatus}, ${d.latencyMs}, ${d.responseBody}, ${d.error}, ${d.startedAt}
          ON CONFLICT (id) DO NOTHING
          RETURNING *)
        SELECT ${deliveryColumns} FROM d JOIN events e ON e.id = d.event_id`);
      return inserted ?? (await findDeliveryById(pool, d.id))!;
    } catch (err) {
      if (tries >= 3 || !(err instanceof UniqueIntegrityConstraintViolationError)) throw err;
    }
  }
}

/**
 * Logs the first attempts of one fan-out in one statement: each row under the id chosen before
 * it was sent (a row already logged is kept as it was and returned), with the next ordinal for
 * its event and endpoint. Rows whose endpoint was deleted meanwhile are not written and not
 * returned; a deletion racing the statement fails it with a foreign-key error, and the caller
 * logs those rows one by one.
 */
export async function recordDeliveries(pool: DatabasePool, ds: readonly NewDelivery[]): Promise<readonly DeliveryRow[]> {
  if (ds.length === 0) return [];
  const col = <K extends keyof NewDelivery>(k: K) => ds.map((d) => d[k]);
  return pool.any(sql.type(deliveryRow)`
    WITH n AS (
      SELECT * FROM unnest(${sql.array(col('id'), 'text')}, ${sql.array(col('endpointId'), 'text')}, ${sql.array(col('eventId'), 'text')},
        ${sql.array(col('trigger'), 'text')}, ${sql.array(col('status'), 'text')}, ${sql.array(col('responseStatus'), 'int4')},
        ${sql.array(col('latencyMs'), 'int4')}, ${sql.array(col('responseBody'), 'text')}, ${sql.array(col('error'), 'text')},
        ${sql.array(col('startedAt'), 'timestamptz')})
        AS n(id, endpoint_id, event_id, trigger, status, response_status, latency_ms, response_body, error, created_at)
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = n.endpoint_id)),
    d AS (
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, attempt, trigger, status, response_status, latency_ms,
        response_body, error, created_at)
      SELECT n.id, n.endpoint_id, n.event_id,
        COALESCE((SELECT max(attempt) FROM webhook_deliveries x WHERE x.endpoint_id = n.endpoint_id AND x.event_id = n.event_id), 0) + 1,
        n.trigger, n.status, n.response_status, n.latency_ms, n.response_body, n.error, n.created_at
      FROM n
      ON CONFLICT (id) DO NOTHING
      RETURNING *),
    logged AS (
      SELECT * FROM d
      UNION ALL
      SELECT x.* FROM webhook_deliveries x JOIN n ON n.id = x.id WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.id = n.id))
    SELECT ${deliveryColumns} FROM logged d JOIN events e ON e.id = d.event_id`);
}

export async function findDeliveryById(db: CommonQueryMethods, id: string): Promise<DeliveryRow | null> {
  return db.maybeOne(sql.type(deliveryRow)`
    SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ${id}`);
}

/** The logged attempts among `ids` (one query for a whole fan-out). */
export async function findDeliveriesByIds(db: CommonQueryMethods, ids: readonly string[]): Promise<readonly DeliveryRow[]> {
  if (ids.length === 0) return [];
  return db.any(sql.type(deliveryRow)`
    SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ANY(${sql.array(ids, 'text')})`);
}

export async function listDeliveries(pool: DatabasePool, endpointId: string, limit: number): Promise<readonly DeliveryRow[]> {
  return pool.any(sql.type(deliveryRow)`
    SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.endpoint_id = ${endpointId} ORDER BY d.created_at DESC, d.attempt DESC LIMIT ${limit}`);
}

/** The first logged attempt of an event at an endpoint, or null while none finished. */
export async function findFirstDelivery(pool: DatabasePool, endpointId: string, eventId: string): Promise<DeliveryRow | null> {
  return pool.maybeOne(sql.type(deliveryRow)`
    SELECT ${deliveryColumns} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
    WHERE d.endpoint_id = ${endpointId} AND d.event_id = ${eventId} ORDER BY d.attempt LIMIT 1`);
}

/** What decides whether an endpoint whose delivery ran out of attempts has been failing for days. */
export interface FailureHistory {
  firstAttemptAt: string | null;
  attempts: number;
  lastError: string | null;
  /** The last attempt's log row: what "send again" retries. */
  lastDeliveryId: string | null;
  lastAttemptAt: string | null;
  succeededSince: boolean;
}

export async function failureHistory(db: CommonQueryMethods, endpointId: string, eventId: string): Promise<FailureHistory> {
  const r = await db.one(sql.type(
    z.object({
      first_attempt_at: z.string().nullable(), attempts: z.number(), last_error: z.string().nullable(),
      last_id: z.string().nullable(), last_at: z.string().nullable(), succeeded_since: z.boolean(),
    }),
  )`
    WITH mine AS (SELECT * FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND event_id = ${eventId}),
      last AS (SELECT id, error, created_at FROM mine ORDER BY attempt DESC LIMIT 1)
    SELECT (SELECT min(created_at) FROM mine) AS first_attempt_at,
      (SELECT count(*)::int FROM mine) AS attempts,
      (SELECT error FROM last) AS last_error,
      (SELECT id FROM last) AS last_id,
      (SELECT created_at FROM last) AS last_at,
      EXISTS (SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status = 'succeeded'
        AND created_at >= COALESCE((SELECT min(created_at) FROM mine), now())) AS succeeded_since`);
  return {
    firstAttemptAt: r.first_attempt_at,
    attempts: r.attempts,
    lastError: r.last_error,
    lastDeliveryId: r.last_id,
    lastAttemptAt: r.last_at,
    succeededSince: r.succeeded_since,
  };
}

/** Marks events dispatched (their fan-out ran to the end); an event marked already keeps its time. */
export async function markEventsDispatched(db: CommonQueryMethods, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await db.query(sql.unsafe`UPDATE events SET dispatched_at = now() WHERE id = ANY(${sql.array([...eventIds], 'text')}) AND dispatched_at IS NULL`);
}
