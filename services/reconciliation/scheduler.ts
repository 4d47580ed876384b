import { ensureMpesaPullWorkflow, ensureReconcilerWorkflow, targetOf } from '../../temporal-client/index.js';
import type { ServiceDeps } from '../deps.js';

/**
 * Starts the reconciler unless it runs already (workers call this at start). A deployment that
 * watches no chain (CHAIN_WATCHERS=off) or sets RECONCILE_EVERY_MINUTES=0 runs none.
 */
export async function ensureReconciler(deps: Pick<ServiceDeps, 'temporal' | 'config'>): Promise<void> {
  const minutes = deps.config.reconcileEveryMinutes;
  if (!deps.config.chainWatchers || minutes <= 0) return;
  await ensureReconcilerWorkflow(targetOf(deps), Math.round(minutes * 60_000));
}

/** Starts the scheduled M-Pesa pull (docs/mobile-money.md, "Backfill") unless it runs already; MPESA_PULL_EVERY_MINUTES=0 runs none. */
export async function ensureMpesaPull(deps: Pick<ServiceDeps, 'temporal' | 'config'>): Promise<void> {
  const minutes = deps.config.mpesaPullEveryMinutes;
  if (minutes <= 0) return;
  await ensureMpesaPullWorkflow(targetOf(deps), Math.round(minutes * 60_000));
}
