import pg from 'pg';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { allSearchAttributeKeys } from '../../domain/search-attributes.js';
import { ensureTemporalCli } from '../../runtime/temporal-cli.js';
import { testDatabaseUrl } from './database.js';

/** Fails at once, naming the address, when the suite's PostgreSQL does not answer. */
export async function checkTestPostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect().catch((err: Error) => {
    throw new Error(`PostgreSQL is not reachable at ${testDatabaseUrl()}: ${err.message}`);
  });
  await client.end();
}

/**
 * One real Temporal dev server (the pinned CLI) for the whole run, started through the SDK's
 * `createLocal` with our search attributes registered. Test files connect to its address; each
 * uses its own task-queue prefix and its own PostgreSQL database, so files run in parallel.
 */
export async function startTestTemporal(): Promise<void> {
  await checkTestPostgres();
  const path = await ensureTemporalCli({ explicitPath: process.env.TEMPORAL_CLI_PATH, downloadBase: process.env.TEMPORAL_CLI_DOWNLOAD_BASE, log: console.log });
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path },
      searchAttributes: allSearchAttributeKeys,
      extraArgs: ['--log-level', 'error'],
    },
  });
  (globalThis as Record<string, unknown>).__malipoTemporal = env;
  process.env.MALIPO_TEST_TEMPORAL_ADDRESS = env.address;
}

export async function stopTestTemporal(): Promise<void> {
  const env = (globalThis as Record<string, unknown>).__malipoTemporal as TestWorkflowEnvironment | undefined;
  await env?.teardown();
}
