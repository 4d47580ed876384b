import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkflowBundlePath } from '@temporalio/worker';
import { workflowBundle } from '../../worker/worker.js';

/**
 * The workflow code, bundled once per `npm test` by the global setup: each test file runs in a
 * fresh module registry, so each one's workers would otherwise run webpack again (about 2 s of
 * CPU, in some sixty files). The bundle is made from the sources as they are when the run starts.
 */
const envName = 'MALIPO_TEST_WORKFLOW_BUNDLE';

export async function writeSharedWorkflowBundle(): Promise<void> {
  const path = join(tmpdir(), `malipo-test-workflows-${process.pid}.js`);
  await writeFile(path, (await workflowBundle()).code);
  process.env[envName] = path;
}

export async function removeSharedWorkflowBundle(): Promise<void> {
  if (process.env[envName]) await rm(process.env[envName]!, { force: true });
}

/** The run's bundle for a test's workers, or undefined (they bundle themselves) outside a jest run. */
export function sharedWorkflowBundle(): WorkflowBundlePath | undefined {
  const codePath = process.env[envName];
  return codePath ? { codePath } : undefined;
}
