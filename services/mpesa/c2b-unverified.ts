import type { DatabasePool } from 'slonik';
import type { Logger } from 'pino';
import { recordUnverifiedFindings } from '../../db/mpesa-pull-repo.js';
import { mpesaFacts } from '../../rails/mpesa/facts.js';
import { pullReachMs } from '../../rails/mpesa/pull.js';

/**
 * Under `c2bSettlesAlone: false` a confirmation counts only once Pull Transactions corroborates it
 * (docs/mobile-money.md, "Trust policy"). One received longer ago than the pull reaches back (48
 * hours), or whose store is not registered for Pull, can never be corroborated: it would wait
 * unseen. Each such payment becomes a reconciliation finding (`unverified_payment`, once per
 * payment) for the merchant to check against their M-Pesa statement and assign or refund by hand.
 * Runs with every scheduled pull, over every store. Returns how many were reported now.
 */
export async function reportUnverifiedC2bPayments(deps: { pool: DatabasePool; logger?: Pick<Logger, 'info'> }, batch = 500): Promise<number> {
  const reported = await recordUnverifiedFindings(deps.pool, { rail: mpesaFacts.id, reachMs: pullReachMs, batch });
  if (reported > 0) deps.logger?.info({ reported }, 'M-Pesa confirmations that Pull Transactions cannot corroborate reported as findings');
  return reported;
}
