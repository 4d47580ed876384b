import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';

const run = promisify(execFile);

/**
 * With `RECORD_HISTORIES=1`, saves a finished workflow's history under test/histories/ so the
 * replay test guards it against non-deterministic changes. Re-record only on purpose. The CLI
 * writes the history as protobuf JSON, the format `historyFromJSON` reads.
 */
export async function maybeRecordHistory(handle: WorkflowHandle, name: string, runId?: string): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const { stdout } = await run(process.env.TEMPORAL_CLI_PATH ?? 'temporal', [
    'workflow', 'show', '--workflow-id', handle.workflowId, ...(runId ? ['--run-id', runId] : []), '--output', 'json',
    '--address', process.env.MALIPO_TEST_TEMPORAL_ADDRESS!,
  ], { maxBuffer: 32 * 1024 * 1024 });
  const file = join(process.cwd(), 'test', 'histories', `${name}.json`);
  await writeFile(file, JSON.stringify({ workflowId: handle.workflowId, history: JSON.parse(stdout) }, null, 1));
}
