import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { taskQueueName } from '../../domain/task-queues.js';
import { systemCheck } from '../../workflows/index.js';
import { replayHistories } from '../../runtime/replay.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { startStack, type Stack } from '../helpers/stack.js';

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/malipo.mjs', ...args], (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

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
    const printed: string[] = [];
    const failed = await replayHistories([join(process.cwd(), 'test', 'histories')], { log: (m: string) => printed.push(m), error: (m: string) => printed.push(m) });
    expect(printed.join('\n')).not.toContain('FAILED');
    expect(failed).toBe(0);
    expect(printed.length).toBeGreaterThanOrEqual(3);
  });

  it('npx malipo replay exits non-zero and explains when the code no longer matches a history', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'malipo-replay-'));
    const recorded = JSON.parse(await readFile(join(process.cwd(), 'test', 'histories', 'payment-link-expired.json'), 'utf8'));
    // Pretend the history was recorded by code that called a different first activity.
    const changed = JSON.stringify(recorded).replace('"setLinkStatus"', '"someRemovedActivity"');
    await writeFile(join(dir, 'changed.json'), changed);
    const ok = await runCli(['replay', join(process.cwd(), 'test', 'histories', 'payment-link-expired.json')]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('ok');
    const bad = await runCli(['replay', dir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('FAILED');
    expect(bad.stderr).toContain('patched()');
  }, 60_000);
});
