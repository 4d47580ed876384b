import { startPendingRequests, type StarterDeps } from '../services/payment-links/payment-requests.js';
import { runPeriodicPass } from './periodic-pass.js';

/** How often a worker looks for links and invoices whose workflow is not started yet. */
export const starterIntervalMs = 1_000;

/**
 * The loop that makes link creation independent of Temporal: a link or invoice made while
 * Temporal could not be reached is stored with `workflow_started = false`, and every worker that
 * serves the payments queue starts such workflows, oldest first, once Temporal answers (within
 * about a second of it coming back). Runs beside the Temporal workers, not in them: it must work
 * precisely when Temporal does not. One pass at a time; a failed pass is logged and retried.
 */
export function runRequestStarter(deps: StarterDeps): { stop(): Promise<void> } {
  return runPeriodicPass(
    starterIntervalMs,
    async (isStopped) => {
      // Drain a backlog in batches without waiting a second between them.
      for (;;) {
        const { started, failed } = await startPendingRequests(deps);
        if (started > 0) deps.logger?.info({ started }, 'started the workflows of links made while Temporal was away');
        if (isStopped() || failed > 0 || started === 0) break;
      }
    },
    (err) => deps.logger?.warn({ err }, 'could not look for links whose workflow is not started; trying again'),
  );
}
