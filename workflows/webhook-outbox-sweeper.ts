import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../activities/webhooks/index.js';

const { sweepOutbox } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/** Sweeps per run before continuing as new, which keeps the history a few hundred events long. */
const sweepsPerRun = 100;

/**
 * The outbox safety net (one per deployment, id `webhook-outbox-sweeper[/<taskQueuePrefix>]`).
 * An event is written in the same transaction as the change that caused it and dispatched right
 * after; if that dispatch never runs (the calling workflow was terminated, a bug), this loop
 * finds the event a minute later and dispatches it. Dispatch is idempotent, so racing the normal
 * path is harmless.
 */
export async function webhookOutboxSweeper(input: { intervalMs: number; sweepsPerRun?: number }): Promise<void> {
  for (let i = 0; i < (input.sweepsPerRun ?? sweepsPerRun); i++) {
    await sleep(input.intervalMs);
    await sweepOutbox();
  }
  await continueAsNew<typeof webhookOutboxSweeper>(input);
}
