import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../../domain/environment.js';
import { isRailId, type RailId, type UsdtRail } from '../../domain/rails.js';
import { searchAttributes } from '../../domain/search-attributes.js';
import { taskQueueName } from '../../domain/task-queues.js';
import type { Config } from '../../runtime/config.js';
import { railEndpoint } from '../../runtime/rail-endpoints.js';
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
  // A rail with no token contract (simulated only in test) has nothing a watcher could recognise:
  // starting one would only fail every tick.
  const wanted = rails.filter((r): r is UsdtRail => r !== 'MOBILE_MONEY' && railEndpoint(config, r, env).usdtContract !== undefined);
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

const demandRow = z.object({ environment: z.enum(['test', 'live']), rail: z.string() });

/**
 * At worker start: makes sure every watcher that open work needs is running (links and invoices
 * still watched, stores with derived addresses). Watchers normally outlive any process; this
 * covers a Temporal cluster that lost them.
 */
export async function ensureWatchersForOpenWork(pool: DatabasePool, temporal: Client, config: Config): Promise<void> {
  if (!config.chainWatchers) return;
  const rows = await pool.any(sql.type(demandRow)`
    SELECT DISTINCT l.environment, unnest(l.enabled_rails) AS rail FROM payment_links l
    WHERE EXISTS (SELECT 1 FROM watched_addresses w WHERE w.owner_id = l.id AND w.watch_until > now())
    UNION
    SELECT DISTINCT m.environment, CASE w.kind WHEN 'tron' THEN 'USDT_TRON' ELSE 'USDT_BSC' END AS rail
    FROM derived_index_marks m JOIN store_wallets w ON w.store_id = m.store_id AND w.environment = m.environment AND w.kind IN ('tron', 'evm')`);
  for (const env of ['test', 'live'] as const) {
    const rails = rows.filter((r) => r.environment === env).map((r) => r.rail).filter(isRailId);
    if (rails.length) await ensureChainWatchers(temporal, config, rails, env);
  }
}
