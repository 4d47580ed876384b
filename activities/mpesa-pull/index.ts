import { pullC2bPayments, pullTargets, type PullSummary } from '../../services/mpesa/c2b-pull.js';
import { reportUnverifiedC2bPayments } from '../../services/mpesa/c2b-unverified.js';
import type { Environment } from '../../domain/environment.js';
import type { ActivityDeps } from '../deps.js';

/**
 * The scheduled M-Pesa pull's activities (workflows/mpesa-pull.ts, docs/mobile-money.md
 * "Backfill"). Their inputs and results carry store ids and counts only: no credentials, no payer
 * data in the workflow's history. Each is idempotent (TransID is unique per shortcode).
 */
export function createMpesaPullActivities(deps: ActivityDeps) {
  return {
    /** The stores registered for Pull Transactions. */
    async mpesaPullTargets(): Promise<{ storeId: string; environment: Environment }[]> {
      return pullTargets(deps);
    },
    /** One store's pull over its last window. */
    async mpesaPullStore(input: { storeId: string; environment: Environment }): Promise<PullSummary> {
      return pullC2bPayments({ pool: deps.pool, temporal: deps.temporal, config: deps.config, logger: deps.logger as never }, input);
    },
    /** Waiting confirmations no pull can corroborate any more, reported as findings (once each): how many now. */
    async mpesaReportUnverified(): Promise<number> {
      return reportUnverifiedC2bPayments({ pool: deps.pool, logger: deps.logger as never });
    },
  };
}
export type MpesaPullActivities = ReturnType<typeof createMpesaPullActivities>;
