import type { Tracer } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { ForeignKeyIntegrityConstraintViolationError, type DatabasePool } from 'slonik';
import type { Metrics } from '../../domain/metrics.js';
import { findEvent, type StoredEvent } from '../../db/event-repo.js';
import {
  findDeliveryById,
  findEndpointById,
  recordDelivery,
  type DeliveryRow,
  type EndpointRow,
} from '../../db/webhook-repo.js';
import { CredentialCryptoError, type Keyring } from '../../domain/crypto/credentials.js';
import { webhookHeaders } from '../../domain/webhooks/signing.js';
import type { ServiceSettings } from '../../services/settings.js';
import { EncryptionKeyRequiredError, keyringFor } from '../../services/keyring.js';
import { resolveDestination } from '../../services/webhooks/destination.js';
import { postWebhook, type PostResult } from './http-post.js';
import { tracedPost } from './traced-post.js';
import { openWebhookSecret } from '../../services/webhooks/secrets.js';
import { concludeExhausted, disableGoneEndpoint } from './endpoint-notices.js';

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

/** The exact bytes sent and signed; the payload's own key order is fixed here for readability. */
export function serializeEvent(p: StoredEvent['payload']): string {
  return JSON.stringify({ id: p.id, type: p.type, createdAt: p.createdAt, environment: p.environment, data: p.data });
}

/**
 * The `whsec_` secrets to sign with: the current one, plus the rolled one while its overlap
 * window lasts. They are stored encrypted and decrypted only here, right before signing (a
 * legacy plaintext row is used as it is); `keyring` is called only if something is encrypted.
 */
export async function signingSecrets(e: EndpointRow, now: Date, keyring: () => Promise<Keyring>): Promise<string[]> {
  const overlap = e.previous_secret && e.previous_secret_expires_at && Date.parse(e.previous_secret_expires_at) > now.getTime();
  const stored = overlap ? [e.secret, e.previous_secret!] : [e.secret];
  const ref = { storeId: e.store_id, environment: e.environment, endpointId: e.id };
  return Promise.all(stored.map((value) => openWebhookSecret(keyring, ref, value)));
}

/** What the delivery log says when a secret cannot be used; the details (no secret in them) go to the worker log. */
function unusableSecret(err: CredentialCryptoError | EncryptionKeyRequiredError): string {
  if (err instanceof EncryptionKeyRequiredError) {
    return 'not sent: the signing secret of this live endpoint is encrypted, and the server has no ENCRYPTION_KEY configured to read it; nothing was signed';
  }
  return 'not sent: the signing secret stored for this endpoint could not be decrypted (tampered with, or encrypted under a key the server no longer holds); nothing was signed. The worker log has the details';
}

/**
 * The keyrings one fan-out reads its endpoints' secrets with, loaded once per environment for all
 * of them (the development key is a file read); each attempt of a delivery workflow loads its own.
 */
export type Keyrings = Partial<Record<EndpointRow['environment'], Promise<Keyring>>>;

/** The running activity's context, or none when the code runs outside a worker (the bench, a test harness). */
export function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/**
 * One attempt of an event at an endpoint, given both rows: signed, sent, logged under
 * `deliveryId` and settled. Shared by the delivery workflow's activity and by the dispatch's
 * inline first attempt, so both make exactly the same request and the same log row.
 */
export function createAttempts(deps: AttemptDeps) {
  const { pool } = deps;

  /** The decrypted secrets; or, when they cannot be used, the failed attempt to log (and an error in the worker log). */
  async function secretsFor(endpoint: EndpointRow, event: StoredEvent, at: Date, keyrings: Keyrings): Promise<string[] | PostResult> {
    try {
      return await signingSecrets(endpoint, at, () => (keyrings[endpoint.environment] ??= keyringFor(deps.config, endpoint.environment)));
    } catch (err) {
      if (!(err instanceof CredentialCryptoError || err instanceof EncryptionKeyRequiredError)) throw err;
      // Loud, never a guess: nothing is signed, the delivery log shows a failed attempt, the worker log says why.
      activityContext()?.log.error('webhook not sent: the signing secret is unusable', {
        endpointId: endpoint.id, storeId: endpoint.store_id, eventId: event.id, error: err.message,
      });
      return { status: null, body: null, latencyMs: 0, error: unusableSecret(err), location: null };
    }
  }

  async function send(endpoint: EndpointRow, event: StoredEvent, startedAt: Date, keyrings: Keyrings): Promise<PostResult> {
    // Checked again at every attempt, on a fresh DNS answer: where the host points may have changed.
    const dest = await resolveDestination(endpoint.url, endpoint.environment, deps.config.webhooks);
    if (!dest.ok) return { status: null, body: null, latencyMs: 0, error: `not sent: the URL ${dest.message}`, location: null };
    const secrets = await secretsFor(endpoint, event, startedAt, keyrings);
    if (!Array.isArray(secrets)) return secrets;
    const body = serializeEvent(event.payload);
    const headers = webhookHeaders(secrets, event.id, Math.floor(startedAt.getTime() / 1000), body);
    const ctx = activityContext();
    // Heartbeats let Temporal notice a worker that died mid-request within seconds.
    const beat = ctx ? setInterval(() => ctx.heartbeat(), 1000) : undefined;
    try {
      const request = { url: dest.url, headers: { ...headers }, body, pinned: dest.addresses, revealResponse: !dest.internal, signal: ctx?.cancellationSignal };
      const ids = { eventId: event.id, endpointId: endpoint.id };
      return await (deps.tracer ? tracedPost(deps.tracer, request, ids) : postWebhook(request));
    } finally {
      if (beat) clearInterval(beat);
    }
  }

  /** Logs the attempt; null when the endpoint (or its store) was deleted while it ran. */
  async function record(input: DeliverAttemptInput, r: PostResult, startedAt: Date): Promise<DeliveryRow | null> {
    const ok = r.status !== null && r.status >= 200 && r.status < 300;
    try {
      return await recordDelivery(pool, {
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
      });
    } catch (err) {
      if (err instanceof ForeignKeyIntegrityConstraintViolationError) return null;
      throw err;
    }
  }

  /** Settles a logged attempt; a 410 disables the endpoint (and tells the store's other endpoints, once). */
  async function settle(row: DeliveryRow): Promise<DeliverAttemptResult> {
    const gone = row.response_status === 410;
    if (gone) {
      await disableGoneEndpoint(deps, { eventId: row.event_id, endpointId: row.endpoint_id, deliveryId: row.id },
        `The endpoint answered 410 Gone on ${row.created_at} (event ${row.event_id}), so Malipo stopped sending to it. Enable it again once it accepts webhooks.`);
    }
    const outcome: AttemptOutcome = row.status === 'succeeded' ? 'succeeded' : gone ? 'endpoint_gone' : 'failed';
    return { outcome, deliveryId: row.id, responseStatus: row.response_status };
  }

  /** Sends and logs one attempt (`keyrings` shared by the attempts of one fan-out); `endpoint_unavailable` when the endpoint (or its store) was deleted meanwhile. */
  async function attempt(endpoint: EndpointRow, event: StoredEvent, input: DeliverAttemptInput, keyrings: Keyrings = {}): Promise<DeliverAttemptResult> {
    const startedAt = new Date();
    const r = await send(endpoint, event, startedAt, keyrings);
    const row = await record(input, r, startedAt);
    if (!row) {
      deps.metrics?.webhookAttempt('endpoint_unavailable');
      return { outcome: 'endpoint_unavailable', deliveryId: input.deliveryId, responseStatus: r.status };
    }
    activityContext()?.log.info('webhook attempt', {
      eventId: event.id, endpointId: endpoint.id, deliveryId: row.id, attempt: row.attempt, status: r.status, latencyMs: r.latencyMs,
    });
    // Counted where it was sent and logged: a retry that finds the logged attempt does not count it again.
    const settled = await settle(row);
    deps.metrics?.webhookAttempt(settled.outcome);
    if (settled.outcome === 'endpoint_gone') deps.metrics?.webhookEndpointDisabled('gone');
    return settled;
  }

  return { attempt, settle };
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
     * Either way the store's other endpoints hear of it (endpoint-notices.ts).
     */
    async concludeExhaustedDelivery(input: { eventId: string; endpointId: string }): Promise<{ disabled: boolean }> {
      deps.metrics?.webhookDeliveryExhausted();
      const concluded = await concludeExhausted(deps, input);
      if (concluded.disabled) deps.metrics?.webhookEndpointDisabled('failing');
      return concluded;
    },
  };
}

function httpError(r: PostResult): string {
  if (r.status !== null && r.status >= 300 && r.status < 400) {
    // No Location from a private address: it is part of what that address answered.
    return `HTTP ${r.status} redirect${r.location ? ` to ${r.location.slice(0, 200)}` : ''} not followed; set the endpoint URL to the final address`;
  }
  if (r.status === 410) return 'HTTP 410 Gone: the endpoint is now disabled';
  return `HTTP ${r.status}`;
}
