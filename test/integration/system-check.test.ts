import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { taskQueueName } from '../../domain/task-queues.js';
import { systemCheck } from '../../workflows/index.js';
import { workflowBundle } from '../../worker/worker.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => stack?.stop());

describe('Temporal foundation', () => {
  it('runs a workflow on the dev server whose activity reads PostgreSQL', async () => {
    const id = `system-check/${Date.now()}`;
    const handle = await stack.temporal.workflow.start(systemCheck, {
      workflowId: id,
      taskQueue: taskQueueName(stack.config.temporal.taskQueuePrefix, 'payments'),
    });
    const result = await handle.result();
    await maybeRecordHistory(handle, 'system-check');
    expect(result.workflowId).toBe(id);
    expect(result.migrations).toBeGreaterThanOrEqual(1);
    expect(Date.parse(result.databaseTime)).not.toBeNaN();
  });

  it('replays every recorded history in test/histories without non-determinism', async () => {
    const dir = join(process.cwd(), 'test', 'histories');
    const files = (await readdir(dir)).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    const bundle = await workflowBundle();
    for (const file of files) {
      const { workflowId, history } = JSON.parse(await readFile(join(dir, file), 'utf8'));
      await expect(
        Worker.runReplayHistory({ workflowBundle: bundle, replayName: file }, historyFromJSON(history), workflowId),
      ).resolves.toBeUndefined();
    }
  });
});
