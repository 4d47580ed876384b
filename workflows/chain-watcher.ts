import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { ChainActivities } from '../activities/chains/index.js';
import type { ChainWatcherInput } from '../domain/workflow-contract.js';

// Chain calls back off (a node or provider down) and never give up: the cursor waits with them.
// A tick heartbeats while it runs, so a tick lost with its worker runs again within 20 s.
const chains = proxyActivities<ChainActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export type { ChainWatcherInput };

/** Ticks per run before continue-as-new: about 10 history events each, far below the limits. */
const ticksPerRun = 500;

/**
 * One watcher per (rail, environment): tick, and when caught up with the head, wait a poll
 * interval. The cursor travels in the input across continue-as-new (and is saved in PostgreSQL
 * by every tick), so a restart resumes exactly where the last tick ended.
 */
export async function chainWatcher(input: ChainWatcherInput): Promise<void> {
  let cursor = input.cursor;
  for (let i = 0; i < (input.ticksPerRun ?? ticksPerRun); i++) {
    const tick = await chains.scanChainTick({ rail: input.rail, environment: input.environment, cursor });
    cursor = tick.cursor;
    // An unreachable node is reported as a result with a backoff rather than a failed activity,
    // so an offline machine logs one line per outage instead of one failure per retry.
    if ('retryAfterMs' in tick) await sleep(tick.retryAfterMs);
    else if (tick.caughtUp) await sleep(input.pollMs);
  }
  await continueAsNew<typeof chainWatcher>({ ...input, cursor });
}
