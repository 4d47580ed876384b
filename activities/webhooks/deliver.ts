import type { Tracer } from '@opentelemetry/api';
import { asyncLocalStorage, type Context } from '@temporalio/activity';
import { Runtime } from '@temporalio/worker';
import { activityCorrelation } from '../../temporal-client/correlation.js';
import type { DatabasePool } from 'slonik';
import type { Metrics } from '../../domain/metrics.js';
import { findEvent, type StoredEvent } from '../../db/event-repo.js';
import { findDeliveryById, findEndpointById, type DeliveryRow, type EndpointRow } from '../../db/webhook-repo.js';
import { CredentialCryptoError, type Keyring } from '../../domain/crypto/credentials.js';
import { webhookHeaders } from '../../domain/webhooks/signing.js';
import type { ServiceSettings } from '../../services/settings.js';
import { EncryptionKeyRequiredError, keyringFor } from '../../services/keyring.js';
import { resolveDestination, type Destination } from '../../services/webhooks/destination.js';
import { postWebhook, type PostResult } from '../../services/webhooks/http-post.js';
import { tracedPost } from './traced-post.js';
import { signingSecrets, unusableSecret } from '../../services/webhooks/secrets.js';
import { concludeExhausted } from '../../services/webhooks/endpoint-notices.js';
import { serializeEvent } from '../../services/webhooks/event-payload.js';
import {
  recordAttempt,
  recordAttempts,
  settleAttempt,
  type SentAttempt,
  type AttemptOutcome,
  type DeliverAttemptInput,
  type DeliverAttemptResult,
} from '../../services/webhooks/attempts.js';

export type { AttemptOutcome, DeliverAttemptInput, DeliverAttemptResult, SentAttempt };

/**
 * What the attempts need. `announce` hands an event Malipo raised about an endpoint (disabled, a
 * delivery exhausted) to the fan-out: the dispatch activities pass their own.
 */
export interface AttemptDeps {
  pool: DatabasePool;
  config: ServiceSettings;
  metrics?: Metrics;
  announce?: (eventId: string) => Promise<unknown>;
  tracer?: Tracer;
}

/**
 * The keyrings one fan-out reads its endpoints' secrets with, loaded once per environment for all
 * of them (the development key is a file read); each attempt of a delivery workflow loads its own.
 */
export interface Keyrings {
  readonly byEnvironment: Partial<Record<EndpointRow['environment'], Promise<Keyring>>>;
  /**
   * The signing secrets decrypted with them, by endpoint and stored value
   * (services/webhooks/secrets.ts `signingSecrets`): each once per fan-out. They go with the
   * fan-out: a decrypted secret is never kept beyond the sends it signs.
   */
  readonly openedSecrets: Map<string, Promise<string>>;
}

/** A fan-out's (or a lone attempt's) keyrings, none read yet. */
export const newKeyrings = (): Keyrings => ({ byEnvironment: {}, openedSecrets: new Map() });

/**
 * Where one fan-out's endpoints point, checked once per URL and environment for all of its events
 * (a batch of the relay's sends many events to each endpoint at the same moment); each attempt of
 * a delivery workflow checks its own, on a fresh DNS answer.
 */
export type Destinations = Map<string, Promise<Destination>>;

type LogMeta = Record<string, unknown>;
type Log = { info(m: string, meta?: LogMeta): void; warn(m: string, meta?: LogMeta): void; error(m: string, meta?: LogMeta): void };

/**
 * Where an attempt's lines go: the running activity's log (it adds the activity's correlation id
 * and type), or outside an activity (the outbox relay) the worker runtime's own logger, where
 * activity lines go too, with the correlation id of the event's origin (activities/webhooks/origin.ts).
 */
export function attemptLog(): Log {
  const ctx = activityContext();
  if (ctx) return ctx.log;
  const logger = Runtime.instance().logger;
  const withId = (meta: LogMeta = {}) => {
    const correlationId = activityCorrelation.getStore();
    return correlationId ? { ...meta, correlationId } : meta;
  };
  return {
    info: (m, meta) => logger.info(m, withId(meta)),
    warn: (m, meta) => logger.warn(m, withId(meta)),
    error: (m, meta) => logger.error(m, withId(meta)),
  };
}

/**
 * The running activity's context, or none when the code runs outside an activity (the outbox
 * relay, the bench, a test harness). Read from the SDK's storage: `Context.current()` throws
 * outside an activity, and a throw per attempt was 3–4 % of the relay's CPU.
 */
export function activityContext(): Context | undefined {
  return asyncLocalStorage.getStore();
}

/**
 * One attempt of an event at an endpoint, given both rows: signed, sent, logged under
 * `deliveryId` and settled. Shared by the delivery workflow's activity and by the dispatch's
 * inline first attempt, so both make exactly the same request and the same log row.
 */
export function createAttempts(deps: AttemptDeps) {
  const { pool } = deps;

  /**
   * The decrypted secrets; or, when they cannot be used, the failed attempt to log (and an error
   * in the worker log). `keyrings` is one fan-out's (or one attempt's), with what it decrypted.
   */
  async function secretsFor(endpoint: EndpointRow, event: StoredEvent, at: Date, keyrings: Keyrings): Promise<string[] | PostResult> {
    const keyring = () => (keyrings.byEnvironment[endpoint.environment] ??= keyringFor(deps.config, endpoint.environment));
    try {
      return await signingSecrets(endpoint, at, keyring, keyrings.openedSecrets);
    } catch (err) {
      if (!(err instanceof CredentialCryptoError || err instanceof EncryptionKeyRequiredError)) throw err;
      // Loud, never a guess: nothing is signed, the delivery log shows a failed attempt, the worker log says why.
      attemptLog().error('webhook not sent: the signing secret is unusable', {
        endpointId: endpoint.id, storeId: endpoint.store_id, eventId: event.id, error: err.message,
      });
      return { status: null, body: null, latencyMs: 0, error: unusableSecret(err), location: null };
    }
  }

  /** Logs the attempt (services/webhooks/attempts.ts); null when the endpoint (or its store) was deleted while it ran. */
  const record = (input: DeliverAttemptInput, r: PostResult, startedAt: Date) => recordAttempt(pool, input, r, startedAt);
  /** Settles a logged attempt by the webhook rules (a 410 disables the endpoint). */
  const settle = (row: DeliveryRow) => settleAttempt(deps, row);

  /** `heartbeat`: false when the caller heartbeats already (a fan-out, for all its attempts at once). */
  async function send(endpoint: EndpointRow, event: StoredEvent, startedAt: Date, keyrings: Keyrings, heartbeat = true, destinations?: Destinations): Promise<PostResult> {
    // Checked again at every attempt (once per fan-out), on a fresh DNS answer: where the host points may have changed.
    const check = () => resolveDestination(endpoint.url, endpoint.environment, deps.config.webhooks);
    const key = `${endpoint.environment} ${endpoint.url}`;
    const dest = await (destinations ? (destinations.get(key) ?? destinations.set(key, check()).get(key)!) : check());
    if (!dest.ok) return { status: null, body: null, latencyMs: 0, error: `not sent: the URL ${dest.message}`, location: null };
    const secrets = await secretsFor(endpoint, event, startedAt, keyrings);
    if (!Array.isArray(secrets)) return secrets;
    const body = serializeEvent(event.payload);
    const headers = webhookHeaders(secrets, event.id, Math.floor(startedAt.getTime() / 1000), body);
    const ctx = activityContext();
    // Heartbeats let Temporal notice a worker that died mid-request within seconds.
    const beat = ctx && heartbeat ? setInterval(() => ctx.heartbeat(), 1000) : undefined;
    try {
      const request = { url: dest.url, headers: { ...headers }, body, pinned: dest.addresses, revealResponse: !dest.internal, signal: ctx?.cancellationSignal };
      const ids = { eventId: event.id, endpointId: endpoint.id };
      return await (deps.tracer ? tracedPost(deps.tracer, request, ids) : postWebhook(request));
    } finally {
      if (beat) clearInterval(beat);
    }
  }

  /** Sends and logs one attempt (`keyrings` shared by the attempts of one fan-out); `endpoint_unavailable` when the endpoint (or its store) was deleted meanwhile. */
  async function attempt(endpoint: EndpointRow, event: StoredEvent, input: DeliverAttemptInput, keyrings: Keyrings = newKeyrings()): Promise<DeliverAttemptResult> {
    const startedAt = new Date();
    const result = await send(endpoint, event, startedAt, keyrings);
    return conclude({ input, result, startedAt }, await record(input, result, startedAt));
  }

  /**
   * Sends one attempt without logging it: a fan-out sends its first attempts, then logs them all
   * in one statement (`concludeAll`). Until then the outbox still shows the event undispatched,
   * so a crash in between resends them (same webhook-id), never drops them.
   */
  async function sendOnly(endpoint: EndpointRow, event: StoredEvent, input: DeliverAttemptInput, keyrings: Keyrings, destinations?: Destinations): Promise<SentAttempt> {
    const startedAt = new Date();
    return { input, result: await send(endpoint, event, startedAt, keyrings, false, destinations), startedAt };
  }

  /**
   * Logs attempts sent by `sendOnly` in one statement and settles each, in their order; `under`
   * runs each one's conclusion in its event's context (the relay: activities/webhooks/origin.ts).
   */
  async function concludeAll(sent: readonly SentAttempt[], under: (s: SentAttempt, work: () => Promise<DeliverAttemptResult>) => Promise<DeliverAttemptResult> = (_, work) => work()): Promise<DeliverAttemptResult[]> {
    const rows = await recordAttempts(pool, sent);
    return Promise.all(sent.map((s, i) => under(s, () => conclude(s, rows[i]!))));
  }

  /** What follows a logged attempt: the worker log, the webhook rules, the counters. */
  async function conclude({ input, result: r }: SentAttempt, row: DeliveryRow | null): Promise<DeliverAttemptResult> {
    if (!row) {
      deps.metrics?.webhookAttempt('endpoint_unavailable');
      return { outcome: 'endpoint_unavailable', deliveryId: input.deliveryId, responseStatus: r.status };
    }
    attemptLog().info('webhook attempt', {
      eventId: input.eventId, endpointId: input.endpointId, deliveryId: row.id, attempt: row.attempt, status: r.status, latencyMs: r.latencyMs,
    });
    // Counted where it was sent and logged: a retry that finds the logged attempt does not count it again.
    const settled = await settle(row);
    deps.metrics?.webhookAttempt(settled.outcome);
    if (settled.outcome === 'endpoint_gone') deps.metrics?.webhookEndpointDisabled('gone');
    return settled;
  }

  return { attempt, sendOnly, concludeAll, settle };
}

export function createDeliveryActivities(deps: AttemptDeps) {
  const { pool } = deps;
  const { attempt, settle } = createAttempts(deps);

  return {
    /**
     * One signed POST of an event to an endpoint, logged. Idempotent per delivery id: once the
     * attempt is logged, a retry of this activity returns the logged outcome without sending.
     * HTTP failures are results, not errors: the workflow's schedule decides what comes next.
     */
    async deliverAttempt(input: DeliverAttemptInput): Promise<DeliverAttemptResult> {
      const logged = await findDeliveryById(pool, input.deliveryId);
      if (logged) return settle(logged);
      const endpoint = await findEndpointById(pool, input.endpointId);
      if (!endpoint || endpoint.status !== 'enabled') return { outcome: 'endpoint_unavailable', deliveryId: input.deliveryId, responseStatus: null };
      const event = await findEvent(pool, input.eventId);
      // Events only disappear with their store, which takes its endpoints along.
      if (!event) return { outcome: 'endpoint_unavailable', deliveryId: input.deliveryId, responseStatus: null };
      return attempt(endpoint, event, input);
    },

    /**
     * A delivery ran out of attempts (about three days). If nothing at all reached the endpoint
     * since this event's first attempt, it has been failing for days: disable it with the reason.
     * Either way the store's other endpoints hear of it (services/webhooks/endpoint-notices.ts).
     */
    async concludeExhaustedDelivery(input: { eventId: string; endpointId: string }): Promise<{ disabled: boolean }> {
      deps.metrics?.webhookDeliveryExhausted();
      const concluded = await concludeExhausted(deps, input);
      if (concluded.disabled) deps.metrics?.webhookEndpointDisabled('failing');
      return concluded;
    },
  };
}
