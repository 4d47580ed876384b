import type { DatabasePool } from 'slonik';
import { markWorkflowsStarted } from '../../db/payment-link-repo.js';

/**
 * Where a creating request leaves its workflow's start: it answers 201 once the link is committed
 * (the row is the request, marked not started), and the start runs here, after the answer, a
 * bounded number at a time. Creation is then bounded by PostgreSQL, not by the orchestrator: a
 * burst of links is absorbed by the table and started at Temporal's pace.
 *
 * Nothing here is needed for a link to be safe. A start that is not taken (too many waiting, or
 * Temporal just failed one), a process that dies with starts queued, a start that fails: each
 * leaves a row marked not started, which the workers start within seconds (worker/request-starter.ts),
 * and any pay, cancel or simulate starts first (ensureRequestStarted). Starting twice is harmless:
 * a workflow id starts once, and an existing one counts as started.
 */
export interface StartHandoff {
  /** Queues the start of request `id`'s workflow; false when it is left to the workers' starter instead. */
  offer(id: string, start: () => Promise<boolean>): boolean;
  /** Resolves once every queued and running start has finished and been recorded (for a clean shutdown). */
  drain(): Promise<void>;
}

export interface HandoffLimits {
  /** Starts in flight at once: enough to keep Temporal's frontend busy, not enough to flood it. */
  concurrency: number;
  /** Starts waiting beyond those; more are left to the workers. Bounds the memory a burst can take. */
  maxWaiting: number;
  /** After a failed start (Temporal unreachable), how long new starts are left to the workers. */
  pauseAfterFailureMs: number;
  /** Started requests recorded in one statement at most. */
  markBatch: number;
}

export const defaultHandoffLimits: HandoffLimits = { concurrency: 16, maxWaiting: 5_000, pauseAfterFailureMs: 1_000, markBatch: 200 };

/**
 * `markStarted` records started requests, a batch in one statement, one batch at a time: a mark
 * that fails leaves its rows marked not started, and the workers' starter finds those workflows
 * already running and records them.
 */
export function startHandoff(markStarted: (ids: string[]) => Promise<void>, limits: HandoffLimits = defaultHandoffLimits): StartHandoff {
  const waiting: { id: string; start: () => Promise<boolean> }[] = [];
  const started: string[] = [];
  let running = 0;
  let marking = false;
  let pausedUntil = 0;
  let idle: (() => void)[] = [];

  const busy = () => running > 0 || waiting.length > 0 || started.length > 0 || marking;
  const settle = () => {
    if (busy()) return;
    const done = idle;
    idle = [];
    for (const resolve of done) resolve();
  };
  const mark = () => {
    if (marking || started.length === 0) return;
    marking = true;
    markStarted(started.splice(0, limits.markBatch))
      .catch(() => undefined)
      .finally(() => {
        marking = false;
        mark();
        settle();
      });
  };
  const pump = () => {
    while (running < limits.concurrency && waiting.length > 0) {
      const { id, start } = waiting.shift()!;
      running++;
      start()
        .catch(() => false)
        .then((ok) => {
          if (ok) started.push(id);
          else {
            // Temporal is away: what waits would fail the same way; the workers start it once it is back.
            pausedUntil = Date.now() + limits.pauseAfterFailureMs;
            waiting.length = 0;
          }
        })
        .finally(() => {
          running--;
          pump();
          mark();
          settle();
        });
    }
  };
  return {
    offer(id, start) {
      if (Date.now() < pausedUntil || waiting.length >= limits.maxWaiting) return false;
      waiting.push({ id, start });
      // After the current turn: the creating request's answer goes out first.
      setImmediate(pump);
      return true;
    },
    drain() {
      if (!busy()) return Promise.resolve();
      return new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}

const handoffs = new WeakMap<DatabasePool, StartHandoff>();

/** The hand-off of a composition root (one per pool), recording its starts in `deps.pool`. */
export function handoffFor(deps: { pool: DatabasePool }): StartHandoff {
  let handoff = handoffs.get(deps.pool);
  if (!handoff) handoffs.set(deps.pool, (handoff = startHandoff((ids) => markWorkflowsStarted(deps.pool, ids))));
  return handoff;
}

/** Waits for the hand-off of `pool`, if it has one, to finish what it holds (a composition root closing). */
export function drainHandoff(pool: DatabasePool | undefined): Promise<void> {
  return (pool && handoffs.get(pool)?.drain()) ?? Promise.resolve();
}
