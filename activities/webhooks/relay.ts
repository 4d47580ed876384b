import { claimEvents } from '../../db/event-repo.js';
import { claimLeaseSeconds } from '../../services/webhooks/fan-out.js';
import { createFanOut } from './dispatch.js';

type Deps = Parameters<typeof createFanOut>[0];

/**
 * The outbox relay's two steps (worker/webhook-relay.ts loops over them): claim a batch of the
 * oldest events no dispatcher holds, then fan the batch out with its first attempts inline. An
 * event costs the relay no Temporal task of its own: one statement claims a batch, and only an
 * endpoint that did not take its first attempt gets a delivery workflow.
 */
export function createOutboxRelay(deps: Deps) {
  const { fanOutEvents } = createFanOut(deps);
  return {
    claim: (limit: number) => claimEvents(deps.pool, { limit, leaseSeconds: claimLeaseSeconds }),
    /** Fans a claimed batch out; an error leaves the batch claimed until its lease ends, which is the relay's back-off. */
    fanOut: (events: Parameters<typeof fanOutEvents>[0]) => fanOutEvents(events, true),
  };
}
