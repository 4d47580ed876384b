import { claimEvents } from '../../db/event-repo.js';
import { claimLeaseSeconds } from '../../services/webhooks/fan-out.js';
import { createFanOut, type DispatchResult } from './dispatch.js';

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
    /**
     * Fans a claimed batch out. If the batch fails as a whole, each of its events is tried again
     * alone, so one event that keeps failing holds back only itself. Its logged attempts are settled,
     * and an attempt not logged goes to its delivery workflow, never inline: the failed batch may
     * have started that workflow already. An event that still fails stays claimed until its lease ends, which is
     * the relay's back-off for it; the first such error is thrown once the others are done.
     */
    async fanOut(events: Parameters<typeof fanOutEvents>[0]) {
      try {
        return await fanOutEvents(events, true);
      } catch (err) {
        if (events.length === 1) throw err;
        const alone = await Promise.allSettled(events.map((e) => fanOutEvents([e], false).then((r) => r[0]!)));
        const failed = alone.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
        return alone.map((r) => (r as PromiseFulfilledResult<DispatchResult>).value);
      }
    },
  };
}
