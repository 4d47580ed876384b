import { Context } from '@temporalio/activity';
import { forgetStaleAddresses } from '../../db/reconciliation-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { UsdtRail } from '../../domain/rails.js';
import { reconcileChain } from '../../rails/chain/reconcile-view.js';
import { usdtRails } from '../../rails/registry.js';
import { reconcilePage, type PageResult } from '../../services/reconciliation/reconcile.js';
import type { ActivityDeps } from '../deps.js';
import { createDispatchActivities } from '../webhooks/dispatch.js';

/** Addresses per page: one balance request on an EVM rail (rails/evm/balances.ts), a short activity. */
export const reconcilePageSize = 500;
/** How often a running page tells Temporal its worker is alive (the reconciler's heartbeat timeout is 30 s). */
const heartbeatMs = 5_000;

export interface ReconcileTarget {
  rail: UsdtRail;
  environment: Environment;
}

/**
 * The reconciler's activities (workflows/reconciler.ts, docs/reconciliation.md). Each page is
 * idempotent: run again, it finds its deposits recorded, its findings open, its outflows adjusted.
 */
export function createReconciliationActivities(deps: ActivityDeps) {
  // The reconciler never waits on merchants' endpoints: its events' first attempts run in delivery workflows.
  const { dispatchEventToWorkflows } = createDispatchActivities(deps);
  return {
    /** The rails to reconcile this run (every EVM and TRON rail with a token contract in the environment); forgets addresses no longer read. */
    async reconcileTargets(): Promise<ReconcileTarget[]> {
      await forgetStaleAddresses(deps.pool);
      const envs: Environment[] = ['test', 'live'];
      return envs.flatMap((environment) => usdtRails.filter((rail) => reconcileChain(deps.config.rails, rail, environment) !== null).map((rail) => ({ rail, environment })));
    },

    /** One page of a rail's watched addresses, in address order after `after`. */
    async reconcilePage(input: ReconcileTarget & { after: string | null; limit?: number }): Promise<PageResult> {
      const chain = reconcileChain(deps.config.rails, input.rail, input.environment);
      if (!chain) return { next: null, checked: 0, skipped: 0, rescanned: 0, recovered: 0, mismatches: 0, outflows: 0 };
      const beat = heartbeat();
      try {
        const page = await reconcilePage(
          { pool: deps.pool, dispatchEvent: (eventId) => dispatchEventToWorkflows({ eventId }), progress: beat.now, logger: deps.logger },
          chain,
          { after: input.after, limit: input.limit ?? reconcilePageSize },
        );
        deps.metrics?.reconciliationFindings(input.rail, 'mismatch', page.mismatches);
        deps.metrics?.reconciliationFindings(input.rail, 'outflow', page.outflows);
        return page;
      } finally {
        beat.stop();
      }
    },
  };
}

/** Heartbeats while a page runs (rescans can take a while); outside an activity (a direct call in a test) does nothing. */
function heartbeat(): { now(): void; stop(): void } {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return { now() {}, stop() {} };
  }
  const timer = setInterval(() => context.heartbeat(), heartbeatMs);
  return { now: () => context.heartbeat(), stop: () => clearInterval(timer) };
}

export type ReconciliationActivities = ReturnType<typeof createReconciliationActivities>;
