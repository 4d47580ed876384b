import type { Tracer } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import type { Metrics } from '../../domain/metrics.js';
import { claimEvent, claimEvents, renewEventClaims, type StoredEvent } from '../../db/event-repo.js';
import { findDeliveriesByIds, markEventsDispatched, matchingEndpointsOf, type DeliveryRow, type EndpointRow } from '../../db/webhook-repo.js';
import { inParallel } from '../../rails/chain/reads.js';
import type { ServiceSettings } from '../../services/settings.js';
import { firstDeliveryId } from '../../services/webhooks/attempts.js';
import { ensureWebhookSweeper } from '../../services/webhooks/endpoints.js';
import { claimLeaseSeconds, claimRenewMs, endpointInFlightLimit, endpointSlotWaitMs, fanOutConcurrency, inlineBudget, perEndpointConcurrency } from '../../services/webhooks/fan-out.js';
import { startDelivery as startDeliveryWorkflow, targetOf } from '../../temporal-client/index.js';
import { underOrigin } from './origin.js';
import { activityContext, attemptLog, createAttempts, newKeyrings, type AttemptOutcome, type Destinations, type Keyrings, type SentAttempt } from './deliver.js';

/** The outbox safety net picks up events recorded this long ago (not by their business time) whose dispatch never ran. */
export const sweepAfterSeconds = 60;

type Deps = { pool: DatabasePool; temporal: Client; config: ServiceSettings; metrics?: Metrics; tracer?: Tracer };

/** Starts the delivery workflow (the retry schedule) of one event to one endpoint; false when it ran already. */
function startDelivery(deps: Deps, event: { id: string; storeId: string; environment: StoredEvent['environment'] }, endpointId: string): Promise<boolean> {
  return startDeliveryWorkflow(targetOf(deps), event, endpointId, deps.config.webhooks.retryScale, firstDeliveryId(event.id, endpointId));
}

export interface DispatchResult {
  /** Endpoints the event goes to (0 when another dispatcher holds the event's claim: it fans it out). */
  endpoints: number;
  /** Set when another dispatcher (the outbox relay) held the event's claim: this call did nothing, that one sends it. */
  deferred?: true;
  /** First attempts this call sent and logged. */
  sent: number;
  /** Delivery workflows this call started: the first attempt failed, or was left to the workflow. */
  retrying: number;
}

/** One event to one endpoint within a fan-out. */
interface Pair {
  event: StoredEvent;
  endpoint: EndpointRow;
  /** The id of the pair's first attempt (`firstDeliveryId`), computed once per fan-out. */
  deliveryId: string;
}

/** Groups a fan-out's pairs by endpoint, in their first appearance's order. */
function byEndpoint(pairs: readonly Pair[]): Pair[][] {
  const groups = new Map<string, Pair[]>();
  for (const p of pairs) {
    const g = groups.get(p.endpoint.id);
    if (g) g.push(p);
    else groups.set(p.endpoint.id, [p]);
  }
  return [...groups.values()];
}

/**
 * The webhook fan-out of claimed events (activities/webhooks/relay.ts and the dispatch activities
 * below run it): every endpoint each event goes to gets its first attempt, sent inline when
 * `inline` and in time, and only an endpoint that did not take it gets a delivery workflow (the
 * retry schedule). The reads and writes are one statement each for the whole batch, whatever its
 * number of events: endpoints, logged attempts, the log of the attempts sent, the dispatch marks.
 */
export function createFanOut(deps: Deps) {
  // An endpoint disabled during a first attempt is announced to the others by this same fan-out.
  const { sendOnly, concludeAll, settle } = createAttempts({ ...deps, announce: (eventId) => dispatchById(eventId, false) });
  let sweeperEnsured: Promise<void> | undefined;
  /**
   * First attempts in flight per endpoint, over every fan-out of this process: an endpoint that
   * hangs holds at most `endpointInFlightLimit` of them, and its further events wait a moment for a
   * slot, then go to delivery workflows instead of keeping the relay's batches (and every other
   * store's events) waiting.
   */
  const slots = new Map<string, { busy: number; waiting: Array<() => void> }>();
  /** A slot for a first attempt at `endpointId`, waiting at most `endpointSlotWaitMs` for one to free; false when none did. */
  function takeSlot(endpointId: string): Promise<boolean> {
    let at = slots.get(endpointId);
    if (!at) slots.set(endpointId, (at = { busy: 0, waiting: [] }));
    if (at.busy < endpointInFlightLimit) {
      at.busy++;
      return Promise.resolve(true);
    }
    const queue = at;
    return new Promise((resolve) => {
      const take = () => {
        clearTimeout(timer);
        queue.busy++;
        resolve(true);
      };
      const timer = setTimeout(() => {
        queue.waiting.splice(queue.waiting.indexOf(take), 1);
        resolve(false);
      }, endpointSlotWaitMs);
      queue.waiting.push(take);
    });
  }
  function giveSlot(endpointId: string): void {
    const at = slots.get(endpointId)!;
    at.busy--;
    const next = at.waiting.shift();
    if (next) next();
    else if (at.busy === 0) slots.delete(endpointId);
  }

  /**
   * One endpoint's first attempt, sent here when `inline` and in time (most endpoints answer 2xx
   * at once, and then no workflow is needed) and logged later with the fan-out's others; or its
   * outcome settled from the log when an earlier try of this dispatch logged it (never sent
   * again); or left to the delivery workflow.
   */
  async function firstAttempt({ event, endpoint, deliveryId }: Pair, logged: DeliveryRow | undefined, inline: boolean, keyrings: Keyrings, destinations: Destinations) {
    if (logged) return { settled: (await settle(logged)).outcome };
    if (!inline || !(await takeSlot(endpoint.id))) return { settled: 'not_attempted' as const };
    try {
      return { sent: await sendOnly(endpoint, event, { eventId: event.id, endpointId: endpoint.id, deliveryId, trigger: 'automatic' }, keyrings, destinations) };
    } catch (err) {
      // Not even sent (the keyring unreadable, say): the workflow's first attempt (same id) makes it.
      attemptLog().warn('inline webhook attempt failed; its delivery workflow takes over', {
        eventId: event.id, endpointId: endpoint.id, error: err instanceof Error ? err.message : String(err),
      });
      return { settled: 'not_attempted' as const };
    } finally {
      giveSlot(endpoint.id);
    }
  }

  /** Logs the inline attempts in one statement; if that fails (the database went away), their delivery workflows (same ids) settle them. */
  async function logSent(sent: readonly SentAttempt[], under: Parameters<typeof concludeAll>[1]): Promise<Array<AttemptOutcome | 'not_attempted'>> {
    if (sent.length === 0) return [];
    try {
      return (await concludeAll(sent, under)).map((r) => r.outcome);
    } catch (err) {
      attemptLog().warn('inline webhook attempts not logged; their delivery workflows take over', {
        attempts: sent.length, error: err instanceof Error ? err.message : String(err),
      });
      return sent.map(() => 'not_attempted' as const);
    }
  }

  /**
   * Fans claimed events out and marks them dispatched; answers per event, in their order. Safe to
   * run again on the same events: logged attempts are settled from the log, not resent.
   */
  async function fanOutEvents(events: readonly StoredEvent[], inline: boolean): Promise<DispatchResult[]> {
    // Once per process: the first dispatch also makes sure the safety net runs.
    sweeperEnsured ??= ensureWebhookSweeper(deps).catch(() => {
      sweeperEnsured = undefined;
    });
    // Heartbeats let Temporal retry a dispatch activity within seconds if this worker dies mid-fan-out
    // (from the start: its reads may wait for a pool connection under load).
    const ctx = activityContext();
    const beat = ctx ? setInterval(() => ctx.heartbeat(), 1000) : undefined;
    // The claims last while the fan-out runs: renewed until the events are marked. If a renewal
    // fails (the database away), no further first attempt is sent inline: another dispatcher may
    // take the events once their claims lapse, and delivery workflows never send twice.
    let claimsHeld = true;
    const renew = setInterval(() => {
      renewEventClaims(deps.pool, events.map((e) => e.id), claimLeaseSeconds).catch(() => (claimsHeld = false));
    }, claimRenewMs);
    // Outside an activity (the relay), each event's work runs in the context of the activity that wrote it.
    const originOf = new Map(events.map((e) => [e.id, e.origin]));
    const under = <T>(eventId: string, work: () => Promise<T>) => (ctx ? work() : underOrigin(originOf.get(eventId), work));
    try {
      const ids = events.map((e) => e.id);
      const endpointsOf = await matchingEndpointsOf(deps.pool, ids);
      const pairs: Pair[] = events.flatMap((event) => (endpointsOf.get(event.id) ?? []).map((endpoint) => ({ event, endpoint, deliveryId: firstDeliveryId(event.id, endpoint.id) })));
      const logged = new Map((await findDeliveriesByIds(deps.pool, pairs.map((p) => p.deliveryId))).map((d) => [d.id, d]));
      const inTime = inlineBudget(performance.now());
      const keyrings = newKeyrings();
      const destinations: Destinations = new Map();
      // A slow endpoint holds at most `perEndpointConcurrency` of the fan-out's requests: the others' go on.
      const firsts = new Map<Pair, Awaited<ReturnType<typeof firstAttempt>>>();
      await inParallel(byEndpoint(pairs), fanOutConcurrency, (group) => inParallel(group, perEndpointConcurrency, async (p) => {
        firsts.set(p, await under(p.event.id, () => firstAttempt(p, logged.get(p.deliveryId), inline && claimsHeld && inTime(performance.now()), keyrings, destinations)));
      }));
      const ordered = pairs.map((p) => firsts.get(p)!);
      const sent = ordered.flatMap((f) => (f.sent ? [f.sent] : []));
      const sentOutcomes = await logSent(sent, (s, work) => under(s.input.eventId, work));
      let next = 0;
      const outcomes = ordered.map((f) => f.settled ?? sentOutcomes[next++]!);
      // Only an endpoint that did not take its first attempt gets a delivery workflow (the retry schedule).
      const unsettled = pairs.filter((_, i) => outcomes[i] === 'failed' || outcomes[i] === 'not_attempted');
      const started = await inParallel(unsettled, fanOutConcurrency, (p) => under(p.event.id, () => startDelivery(deps, p.event, p.endpoint.id)));
      await markEventsDispatched(deps.pool, ids);
      // Each event's figures, counted in one pass over the pairs and one over the workflows started.
      const results = new Map(events.map((e) => [e.id, { endpoints: endpointsOf.get(e.id)?.length ?? 0, sent: 0, retrying: 0 }]));
      pairs.forEach((p, i) => {
        if (ordered[i]!.sent !== undefined && outcomes[i] !== 'not_attempted') results.get(p.event.id)!.sent++;
      });
      unsettled.forEach((p, i) => {
        if (started[i]) results.get(p.event.id)!.retrying++;
      });
      return events.map((e) => results.get(e.id)!);
    } finally {
      if (beat) clearInterval(beat);
      clearInterval(renew);
    }
  }

  /**
   * Claims one event and fans it out. While another dispatcher holds its claim (the outbox relay
   * took it first) this answers at once, `deferred`, with no endpoints: that dispatcher sends it.
   */
  async function dispatchById(eventId: string, inline: boolean): Promise<DispatchResult> {
    const claim = await claimEvent(deps.pool, eventId, claimLeaseSeconds);
    // The caller commits the event before dispatching; a missing one is retried, not dropped.
    if (claim.status === 'missing') throw new Error(`event ${eventId} is not in the outbox (yet)`);
    if (claim.status !== 'claimed') return { endpoints: 0, deferred: true, sent: 0, retrying: 0 };
    // Dispatched already (by the relay, or an earlier try): what is not logged has a delivery
    // workflow, or gets one now; nothing is sent inline beside it. A failure keeps the claim until
    // it lapses, so the relay takes the event then (no claim is given back: it may be another's by now).
    return (await fanOutEvents([claim.event], inline && !claim.dispatched))[0]!;
  }

  return { fanOutEvents, dispatchById };
}

export function createDispatchActivities(deps: Deps) {
  const { fanOutEvents, dispatchById } = createFanOut(deps);
  return {
    /**
     * Fans one outbox event out to every matching endpoint: the first attempt of each is made
     * right here, and only an endpoint that did not take it gets a delivery workflow (the retry
     * schedule). Then marks the event dispatched. Safe to run again: logged attempts are not resent.
     * Payment links written before the outbox relay still call it from their histories.
     */
    dispatchEvent: (input: { eventId: string }) => dispatchById(input.eventId, true),

    /**
     * The same fan-out with every first attempt left to a delivery workflow: for callers that
     * must not wait on merchants' endpoints (the chain scan, an endpoint notice).
     */
    dispatchEventToWorkflows: (input: { eventId: string }) => dispatchById(input.eventId, false),

    /**
     * The safety net: claims events written over a minute ago that no dispatcher finished and
     * none holds now, and leaves their first attempts to delivery workflows.
     */
    async sweepOutbox(): Promise<{ dispatched: number }> {
      // Each group of 20 is claimed just before its fan-out: none waits claimed behind the others.
      let dispatched = 0;
      for (let round = 0; round < 5; round++) {
        const events = await claimEvents(deps.pool, { limit: 20, leaseSeconds: claimLeaseSeconds, olderThanSeconds: sweepAfterSeconds });
        if (events.length > 0) await fanOutEvents(events, false);
        dispatched += events.length;
        if (events.length < 20) break;
      }
      return { dispatched };
    },
  };
}
