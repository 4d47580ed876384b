import { findUntoldC2bPayments } from '../../db/mpesa-c2b-handoff-repo.js';
import { signalLink, type C2bDeps } from './c2b-callbacks.js';

/** A confirmation is left this long to the request that stored it before a worker tells the link instead. */
export const c2bHandoffGraceSeconds = 20;

/**
 * The second path of a C2B confirmation. The confirmation route stores it, then tells the link's
 * workflow; a crash or a Temporal outage between the two would leave it stored but uncounted, and
 * Daraja posts a confirmation once. The workers therefore tell the link again for every matched
 * confirmation it has not counted (the workflow counts a payment key once, so telling twice is
 * harmless). Returns how many were told and how many could not be (Temporal still away: next pass).
 */
export async function tellUntoldC2bPayments(deps: C2bDeps, batch = 50): Promise<{ told: number; failed: number }> {
  const rows = await findUntoldC2bPayments(deps.pool, c2bHandoffGraceSeconds, batch);
  let told = 0;
  let failed = 0;
  for (const row of rows) {
    try {
      await signalLink(deps, row);
      told++;
    } catch {
      failed++;
      break;
    }
  }
  return { told, failed };
}
