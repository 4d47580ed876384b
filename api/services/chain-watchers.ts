import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { Environment } from '../../domain/environment.js';
import type { RailId, UsdtRail } from '../../domain/rails.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { taskQueueName } from '../../domain/task-queues.js';
import type { Config } from '../../runtime/config.js';
import { chainWatcherWorkflowId, type chainWatcher } from '../../workflows/chain-watcher.js';

/** How often a caught-up watcher looks for new blocks, by the chain's block time. */
export const defaultPollMs: Record<UsdtRail, number> = {
  USDT_TRON: 3_000,
  USDT_BSC: 1_000,
  USDT_ETH: 6_000,
  USDT_POLYGON: 2_000,
  USDT_SOL: 2_000,
};

const started = new Set<string>();

/**
 * Makes sure the watcher of each USDT rail runs in the environment. Watchers start on demand
 * (a link or a derive that needs them) so a deployment never polls chains it does not use. An
 * already running watcher is left alone; each process asks Temporal once per watcher.
 */
export async function ensureChainWatchers(temporal: Client, config: Config, rails: readonly RailId[], env: Environment): Promise<void> {
  if (!config.chainWatchers) return;
  const wanted = rails.filter((r): r is UsdtRail => r !== 'MOBILE_MONEY');
  await Promise.all(
    wanted.map(async (rail) => {
      const id = chainWatcherWorkflowId(rail, env, config.temporal.taskQueuePrefix);
      const key = id;
      if (started.has(key)) return;
      try {
        await temporal.workflow.start<typeof chainWatcher>('chainWatcher', {
          workflowId: id,
          taskQueue: taskQueueName(config.temporal.taskQueuePrefix, 'chains'),
          args: [{ rail, environment: env, cursor: null, pollMs: config.chainPollMs ?? defaultPollMs[rail] }],
          workflowIdConflictPolicy: 'USE_EXISTING',
          typedSearchAttributes: [
            { key: searchAttributes.rail, value: rail },
            { key: searchAttributes.environment, value: env },
          ],
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      started.add(key);
    }),
  );
}
