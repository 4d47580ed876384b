import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Metrics } from '../../domain/metrics.js';
import { findEvent, type StoredEvent } from '../../db/event-repo.js';
import {
  findDeliveriesByIds,
  markEventDispatched,
  matchingEndpoints,
  undispatchedEventIds,
  type DeliveryRow,
  type EndpointRow,
} from '../../db/webhook-repo.js';
import { inParallel } from '../../rails/chain/reads.js';
import type { ServiceSettings } from '../../services/settings.js';
import { firstDeliveryId } from '../../services/webhooks/attempts.js';
import { ensureWebhookSweeper } from '../../services/webhooks/endpoints.js';
import { fanOutConcurrency, inlineBudget } from '../../services/webhooks/fan-out.js';
import { startDelivery as startDeliveryWorkflow, targetOf } from '../../temporal-client/index.js';
import { activityContext, createAttempts, type AttemptOutcome, type Keyrings, type SentAttempt } from './deliver.js';

/** The outbox safety net picks up events recorded this long ago (not by their business time) whose dispatch never ran. */
export const sweepAfterSeconds = 60;

type Deps = { pool: DatabasePool; temporal: Client; config: ServiceSettings; metrics?: Metrics; tracer?: Tracer };

/** Starts the delivery workflow (the retry schedule) of one event to one endpoint; false when it ran already. */
function startDelivery(deps: Deps, event: { id: string; storeId: string; environment: StoredEvent['environment'] }, endpointId: string): Promise<boolean> {
  return startDeliveryWorkflow(targetOf(deps), event, endpointId, deps.config.webhooks.retryScale, firstDeliveryId(event.id, endpointId));
}

export interface DispatchResult {
  /** Endpoints the event goes to. */
  endpoints: number;
  /** First attempts this call sent and logged. */
  sent: number;
  /** Delivery workflows this call started: the first attempt failed, or was left to the workflow. */
  retrying: number;
}

export function createDispatchActivities(deps: Deps) {
  // An endpoint disabled during a first attempt is announced to the others by this same fan-out.
  const { sendOnly, concludeAll, settle } = createAttempts({ ...deps, announce: (eventId) => fanOut(eventId, false) });
  let sweeperEnsured: Promise<void> | undefined;

  /**
   * One endpoint's first attempt, sent here when `inline` and in time (most endpoints answer 2xx
   * at once, and then no workflow is needed) and logged later with the fan-out's others; or its
   * outcome settled from the log when an earlier try of this dispatch logged it (never sent
   * again); or left to the delivery workflow.
   */
  async function firstAttempt(event: StoredEvent, endpoint: EndpointRow, logged: DeliveryRow | undefined, inline: boolean, keyrings: Keyrings) {
    if (logged) return { settled: (await settle(logged)).outcome };
    if (!inline) return { settled: 'not_attempted' as const };
    try {
      return { sent: await sendOnly(endpoint, event, { eventId: event.id, endpointId: endpoint.id, deliveryId: firstDeliveryId(event.id, endpoint.id), trigger: 'automatic' }, keyrings) };
    } catch (err) {
      // Not even sent (the keyring unreadable, say): the workflow's first attempt (same id) makes it.
      activityContext()?.log.warn('inline webhook attempt failed; its delivery workflow takes over', {
        eventId: event.id, endpointId: endpoint.id, error: err instanceof Error ? err.message : String(err),
      });
      return { settled: 'not_attempted' as const };
    }
  }

  /** Logs the inline attempts in one statement; if that fails (the database went away), their delivery workflows (same ids) settle them. */
  async function logSent(event: StoredEvent, sent: readonly SentAttempt[]): Promise<Array<AttemptOutcome | 'not_attempted'>> {
    try {
      return (await concludeAll(sent)).map((r) => r.outcome);
    } catch (err) {
      activityContext()?.log.warn('inline webhook attempts not logged; their delivery workflows take over', {
        eventId: event.id, attempts: sent.length, error: err instanceof Error ? err.message : String(err),
      });
      return sent.map(() => 'not_attempted' as const);
    }
  }

  async function fanOut(eventId: string, inline: boolean): Promise<DispatchResult> {
    // Once per worker process: the first dispatch also makes sure the safety net runs.
    sweeperEnsured ??= ensureWebhookSweeper(deps).catch(() => {
      sweeperEnsured = undefined;
    });
    // Heartbeats let Temporal retry the dispatch within seconds if this worker dies mid-fan-out
    // (from the start: its reads may wait for a pool connection under load).
    const ctx = activityContext();
    const beat = ctx ? setInterval(() => ctx.heartbeat(), 1000) : undefined;
    try {
      const event = await findEvent(deps.pool, eventId);
      // The caller commits the event before dispatching; a missing one is retried, not dropped.
      if (!event) throw new Error(`event ${eventId} is not in the outbox (yet)`);
      const endpoints = await matchingEndpoints(deps.pool, event);
      const logged = new Map((await findDeliveriesByIds(deps.pool, endpoints.map((e) => firstDeliveryId(event.id, e.id)))).map((d) => [d.endpoint_id, d]));
      const inTime = inlineBudget(performance.now());
      const keyrings: Keyrings = {};
      const firsts = await inParallel(endpoints, fanOutConcurrency, (endpoint) =>
        firstAttempt(event, endpoint, logged.get(endpoint.id), inline && inTime(performance.now()), keyrings));
      const sent = firsts.flatMap((f) => (f.sent ? [f.sent] : []));
      const sentOutcomes = await logSent(event, sent);
      let next = 0;
      const outcomes = firsts.map((f) => f.settled ?? sentOutcomes[next++]!);
      // Only an endpoint that did not take its first attempt gets a delivery workflow (the retry schedule).
      const unsettled = endpoints.filter((_, i) => outcomes[i] === 'failed' || outcomes[i] === 'not_attempted');
      const retrying = await inParallel(unsettled, fanOutConcurrency, (endpoint) => startDelivery(deps, event, endpoint.id));
      await markEventDispatched(deps.pool, event.id);
      return { endpoints: endpoints.length, sent: sentOutcomes.filter((o) => o !== 'not_attempted').length, retrying: retrying.filter(Boolean).length };
    } finally {
      if (beat) clearInterval(beat);
    }
  }

  return {
    /**
     * Fans one outbox event out to every matching endpoint: the first attempt of each is made
     * right here, and only an endpoint that did not take it gets a delivery workflow (the retry
     * schedule). Then marks the event dispatched. Safe to run again: logged attempts are not resent.
     */
    dispatchEvent: (input: { eventId: string }) => fanOut(input.eventId, true),

    /**
     * The same fan-out with every first attempt left to a delivery workflow: for callers that
     * must not wait on merchants' endpoints (the chain scan, the outbox sweep).
     */
    dispatchEventToWorkflows: (input: { eventId: string }) => fanOut(input.eventId, false),

    /** The safety net: dispatches events committed over a minute ago whose dispatch never ran. */
    async sweepOutbox(): Promise<{ dispatched: number }> {
      const ids = await undispatchedEventIds(deps.pool, sweepAfterSeconds, 100);
      for (const eventId of ids) await fanOut(eventId, false);
      return { dispatched: ids.length };
    },
  };
}
