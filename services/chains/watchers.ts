import type { Client } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { railsWithOpenWork } from '../../db/watch-repo.js';
import type { Environment } from '../../domain/environment.js';
import type { RailId, UsdtRail } from '../../domain/rails.js';
import { isRailId, railFacts } from '../../rails/registry.js';
import type { ServiceSettings } from '../settings.js';
import { railEndpoint } from '../../rails/settings.js';
import { chainWatcherWorkflowId } from '../../domain/workflow-contract.js';
import { ensureChainWatcher } from '../../temporal-client/index.js';
import { isScanned } from '../../rails/methods.js';

const started = new Set<string>();

/**
 * Makes sure the watcher of each USDT rail runs in the environment. Watchers start on demand
 * (a link or a derive that needs them) so a deployment never polls chains it does not use. An
 * already running watcher is left alone; each process asks Temporal once per watcher.
 */
export async function ensureChainWatchers(temporal: Client, config: ServiceSettings, rails: readonly RailId[], env: Environment): Promise<void> {
  if (!config.chainWatchers) return;
  // A rail with no token contract (simulated only in test) has nothing a watcher could recognise:
  // starting one would only fail every tick.
  const wanted = rails.filter((r): r is UsdtRail => isScanned(r) && railEndpoint(config.rails, r, env).usdtContract !== undefined);
  await Promise.all(
    wanted.map(async (rail) => {
      const key = chainWatcherWorkflowId(rail, env, config.temporal.taskQueuePrefix);
      if (started.has(key)) return;
      await ensureChainWatcher({ client: temporal, taskQueuePrefix: config.temporal.taskQueuePrefix }, rail, env, config.chainPollMs ?? railFacts[rail].pollMs);
      started.add(key);
    }),
  );
}


/**
 * At worker start: makes sure every watcher that open work needs is running (links and invoices
 * still watched, stores with derived addresses). Watchers normally outlive any process; this
 * covers a Temporal cluster that lost them.
 */
export async function ensureWatchersForOpenWork(pool: DatabasePool, temporal: Client, config: ServiceSettings): Promise<void> {
  if (!config.chainWatchers) return;
  const rows = await railsWithOpenWork(pool);
  for (const env of ['test', 'live'] as const) {
    const rails = rows.filter((r) => r.environment === env).map((r) => r.rail).filter(isRailId);
    if (rails.length) await ensureChainWatchers(temporal, config, rails, env);
  }
}
