import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../worker/worker.js';

/**
 * `npx malipo replay <history.json|dir>…`: replays recorded workflow histories against the
 * current workflow code. Accepts our recorded form (`{ workflowId, history }`, test/histories/)
 * and the JSON the Temporal UI or `temporal workflow show -o json` exports (`{ events: [...] }`).
 * Returns the number of histories that failed; each failure is explained on stderr.
 */
export async function replayHistories(paths: string[], out: Pick<Console, 'log' | 'error'> = console, opts: { traced?: boolean } = {}): Promise<number> {
  const files: string[] = [];
  for (const p of paths) {
    if ((await stat(p)).isDirectory()) files.push(...(await readdir(p)).filter((f) => f.endsWith('.json')).sort().map((f) => join(p, f)));
    else files.push(p);
  }
  if (files.length === 0) throw new Error('no history files given (pass .json files or a folder of them)');
  // `traced`: through the bundle a worker with tracing on runs (OpenTelemetry's workflow interceptors in it).
  const bundle = await workflowBundle(opts.traced ?? false);
  let failed = 0;
  for (const file of files) {
    const raw = JSON.parse(await readFile(file, 'utf8')) as { workflowId?: string; history?: unknown; events?: unknown };
    const history = raw.history ?? raw;
    const workflowId = raw.workflowId ?? 'replayed-workflow';
    try {
      await Worker.runReplayHistory({ workflowBundle: bundle, replayName: file }, historyFromJSON(history), workflowId);
      out.log(`ok       ${file}`);
    } catch (err) {
      failed++;
      const e = err as Error;
      out.error(`FAILED   ${file}\n         ${e.name}: ${e.message.split('\n')[0]}\n         The current workflow code does not produce the recorded history: guard the change with patched() or re-record on purpose.`);
    }
  }
  return failed;
}
