import { ActivityFailure, continueAsNew, log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ReconciliationActivities } from '../activities/reconciliation/index.js';
import type { ReconcilerInput } from '../domain/workflow-contract.js';

// Reading the database is quick; a page reads a chain (and may rescan on several providers), so it
// heartbeats and backs off. A page that still fails after its attempts is left for the next run.
const { reconcileTargets } = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});
const { reconcilePage } = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 4 },
});

export type { ReconcilerInput };

/** Runs before continue-as-new at most; a long run continues sooner, when its history grows past this. */
const runsPerRun = 100;
const historyEventLimit = 4_000;

/**
 * The independent reconciler (one per deployment, id `reconciler[/<taskQueuePrefix>]`,
 * docs/reconciliation.md): every `everyMs`, each rail's watched addresses, page by page, have
 * their token balance compared with what the ledger recorded. The workflow only paces the pages;
 * the activities read, rescan and record.
 */
export async function reconciler(input: ReconcilerInput): Promise<void> {
  for (let run = 0; run < (input.runsPerRun ?? runsPerRun); run++) {
    await reconcileOnce(input.pageSize);
    await sleep(input.everyMs);
    if (workflowInfo().historyLength > historyEventLimit || workflowInfo().continueAsNewSuggested) break;
  }
  await continueAsNew<typeof reconciler>(input);
}

async function reconcileOnce(pageSize: number | undefined): Promise<void> {
  let targets: Awaited<ReturnType<typeof reconcileTargets>>;
  try {
    targets = await reconcileTargets();
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    // The database is away: this run is skipped, the reconciler lives on.
    log.warn('reconciliation targets could not be read; the run is skipped');
    return;
  }
  for (const target of targets) {
    let after: string | null = null;
    do {
      try {
        after = (await reconcilePage({ ...target, after, ...(pageSize ? { limit: pageSize } : {}) })).next;
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        // A rail whose nodes cannot answer now waits for the next run; the other rails go on.
        log.warn('reconciliation page failed; the rail is tried again next run', { rail: target.rail, environment: target.environment });
        after = null;
      }
    } while (after !== null);
  }
}
