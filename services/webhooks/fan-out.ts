/**
 * How the webhook fan-out spends its time (activities/webhooks/dispatch.ts runs it): first
 * attempts in flight at once, and how long after the dispatch starts one may still be sent inline.
 */

/** Deliveries in flight at once when one event fans out to many endpoints. */
export const fanOutConcurrency = 32;

/**
 * A first attempt is made inline only if it starts within this long of the dispatch: each may
 * take the 10 s an endpoint is given, and the dispatch activity has 30 s. Endpoints left over
 * get their first attempt from their delivery workflow instead.
 */
export const inlineBudgetMs = 15_000;

/**
 * The inline budget of one fan-out started at `startMs` (a monotonic clock, `performance.now()`):
 * whether an endpoint's first attempt, starting at `nowMs`, may still be sent inline.
 */
export function inlineBudget(startMs: number, budgetMs: number = inlineBudgetMs): (nowMs: number) => boolean {
  const until = startMs + budgetMs;
  return (nowMs) => nowMs < until;
}

/** Requests one endpoint may hold at once within a fan-out: a slow endpoint does not take every slot. */
export const perEndpointConcurrency = 4;

/**
 * How long a dispatcher's claim on an event lasts (db/event-repo.ts, claimEvents). Longer than a
 * fan-out can take (the inline budget plus an attempt's 10 s), so no claim lapses while its
 * dispatcher still works; a dispatcher that died holds its events this long at most.
 */
export const claimLeaseSeconds = 60;

/** A fan-out renews its events' claims this often while it runs: well inside the lease. */
export const claimRenewMs = 15_000;

/**
 * First attempts one endpoint may have in flight at once in a process, over all its fan-outs
 * (the relay runs several batches at once). Past it, an attempt waits up to `endpointSlotWaitMs`
 * for one to finish (a fast endpoint frees one within milliseconds), then goes to its delivery
 * workflow: an endpoint that hangs holds this many of the relay's requests, never all of them.
 */
export const endpointInFlightLimit = 16;
export const endpointSlotWaitMs = 1_000;
