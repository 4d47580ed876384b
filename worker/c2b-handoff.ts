import type { C2bDeps } from '../services/mpesa/c2b-callbacks.js';
import { tellUntoldC2bPayments } from '../services/mpesa/c2b-handoff.js';
import { runPeriodicPass } from './periodic-pass.js';

/** How often a worker looks for C2B confirmations whose link was never told. */
export const c2bHandoffIntervalMs = 5_000;

/**
 * Runs beside the Temporal workers of the payments queue, like the request starter: it must work
 * when the API process that stored a confirmation died or could not reach Temporal. One pass at a
 * time; a failed pass is logged and retried.
 */
export function runC2bHandoff(deps: C2bDeps, intervalMs = c2bHandoffIntervalMs): { stop(): Promise<void> } {
  return runPeriodicPass(
    intervalMs,
    async () => {
      const { told } = await tellUntoldC2bPayments(deps);
      if (told > 0) deps.logger?.info({ told }, 'told links of M-Pesa C2B confirmations stored but not yet counted');
    },
    (err) => deps.logger?.warn({ err }, 'could not look for untold M-Pesa C2B confirmations; trying again'),
  );
}
