import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { randomToken } from '../../domain/ids.js';
import { ensureClusterBinaries } from '../../runtime/cluster/binaries.js';
import { freePorts } from '../../runtime/cluster/ports.js';
import { temporalDatabaseNames } from '../../runtime/cluster/settings.js';
import { startTemporalCluster, type TemporalCluster } from '../../runtime/cluster/temporal-cluster.js';
import { dropTemporalDatabases } from '../../runtime/cluster/temporal-databases.js';
import { testDatabaseUrl } from './database.js';

/**
 * The cluster test run's Temporal (`npm run test:cluster`): the pinned server on the test
 * PostgreSQL with a fresh pair of databases, `temporal_t<random>` and `…_visibility`, dropped at
 * the end, and the read-only UI server, all on free ports. Test files reach it exactly as they
 * reach the dev server in the normal run (MALIPO_TEST_TEMPORAL_ADDRESS).
 */
export async function startTestCluster(): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect().catch((err: Error) => {
    throw new Error(`PostgreSQL is not reachable at ${testDatabaseUrl()}: ${err.message}`);
  });
  await client.end();
  const binaries = await ensureClusterBinaries({
    serverPath: process.env.TEMPORAL_SERVER_PATH,
    sqlToolPath: process.env.TEMPORAL_SQL_TOOL_PATH,
    uiServerPath: process.env.TEMPORAL_UI_SERVER_PATH,
    log: console.log,
  });
  const dir = await mkdtemp(join(tmpdir(), 'malipo-cluster-'));
  const [frontendPort, uiPort] = await freePorts(2);
  const startedAt = Date.now();
  const temporalDatabase = `temporal_t${randomToken(8).toLowerCase()}`;
  let cluster: TemporalCluster;
  try {
    cluster = await startTemporalCluster({
      binaries, dir, databaseUrl: testDatabaseUrl(), temporalDatabase, namespace: 'default', frontendPort: frontendPort!, uiPort, logLevel: 'warn',
    });
  } catch (err) {
    await dropTemporalDatabases(testDatabaseUrl(), temporalDatabaseNames(temporalDatabase)).catch(() => undefined);
    throw new Error(`${(err as Error).message}\n(the cluster's files: ${dir})`);
  }
  console.log(`\nTemporal cluster ${cluster.address} on PostgreSQL (${cluster.names.store}, ${cluster.names.visibility}) ready in ${Date.now() - startedAt} ms; UI ${cluster.uiUrl}`);
  (globalThis as Record<string, unknown>).__malipoCluster = { cluster, dir };
  process.env.MALIPO_TEST_TEMPORAL_ADDRESS = cluster.address;
  process.env.MALIPO_TEST_TEMPORAL_UI_URL = cluster.uiUrl;
  process.env.MALIPO_TEST_TEMPORAL_CLUSTER = '1';
}

export async function stopTestCluster(): Promise<void> {
  const state = (globalThis as Record<string, unknown>).__malipoCluster as { cluster: TemporalCluster; dir: string } | undefined;
  if (!state) return;
  await state.cluster.stop();
  await dropTemporalDatabases(testDatabaseUrl(), state.cluster.names);
  await rm(state.dir, { recursive: true, force: true });
}
