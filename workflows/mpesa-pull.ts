import { ActivityFailure, continueAsNew, log, patched, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { MpesaPullActivities } from '../activities/mpesa-pull/index.js';
import type { MpesaPullInput } from '../domain/workflow-contract.js';

// Each store's pull calls Daraja; a store whose pull keeps failing waits for the next run.
const { mpesaPullTargets, mpesaPullStore, mpesaReportUnverified } = proxyActivities<MpesaPullActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 4 },
});

const runsPerRun = 100;
const reportUnverifiedPatch = 'report-unverified-c2b';
const historyEventLimit = 4_000;

/**
 * The scheduled M-Pesa pull (one per deployment, id `mpesa-pull[/<taskQueuePrefix>]`): every
 * `everyMs`, each store registered for Pull Transactions has its last window read (activities/
 * mpesa-pull), then confirmations no pull can corroborate any more are reported as findings. The
 * workflow only paces; it holds store ids and counts, nothing secret.
 */
export async function mpesaPull(input: MpesaPullInput): Promise<void> {
  for (let run = 0; run < (input.runsPerRun ?? runsPerRun); run++) {
    await pullOnce();
    await sleep(input.everyMs);
    if (workflowInfo().historyLength > historyEventLimit || workflowInfo().continueAsNewSuggested) break;
  }
  await continueAsNew<typeof mpesaPull>(input);
}

async function pullOnce(): Promise<void> {
  let targets: Awaited<ReturnType<typeof mpesaPullTargets>>;
  try {
    targets = await mpesaPullTargets();
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('M-Pesa pull targets could not be read; the run is skipped');
    return;
  }
  for (const target of targets) {
    try {
      await mpesaPullStore(target);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      log.warn('M-Pesa pull failed for a store; it is tried again next run', { storeId: target.storeId, environment: target.environment });
    }
  }
  // After the pulls (which corroborate what they can): what still waits and can never be corroborated.
  // Patched: a run recorded before this step replays without it. The workflow continues as new
  // after at most 100 runs, so the gate may go a week after this step reached production.
  if (!patched(reportUnverifiedPatch)) return;
  try {
    await mpesaReportUnverified();
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    log.warn('Unverifiable M-Pesa confirmations could not be reported; tried again next run');
  }
}
