import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { httpCall, type HttpRequest } from './http.js';
import type { Stack } from './stack.js';

export type CrashPoint = 'after-claim' | 'before-workflow-start' | 'after-workflow-start';

/**
 * Sends one request to an API process (test/helpers/api-child.ts) that shares the stack's
 * database, Temporal namespace and task queues, and that dies by SIGKILL at `crashAt` while
 * serving it. Resolves once the process is dead; the request never got an answer, except at
 * `after-workflow-start`, which comes after the answer may have gone out.
 */
export async function crashDuring(stack: Stack, crashAt: CrashPoint, req: HttpRequest & { key: string }, guardMs = 60_000): Promise<void> {
  const answerMayArrive = crashAt === 'after-workflow-start';
  const child = spawn(process.execPath, ['bin/run-ts.mjs', 'test/helpers/api-child.ts'], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: stack.config.databaseUrl!,
      TEMPORAL_ADDRESS: stack.config.temporal.address!,
      TASK_QUEUE_PREFIX: stack.config.temporal.taskQueuePrefix,
      PUBLIC_BASE_URL: stack.config.publicBaseUrl,
      IDEMPOTENCY_LEASE_SECONDS: String(stack.config.idempotencyLeaseSeconds),
      CHAIN_WATCHERS: 'off',
      LOG_LEVEL: 'silent',
      CRASH_AT: crashAt,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const guard = setTimeout(() => child.kill('SIGKILL'), guardMs);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout.on('data', () => {
        const m = /\{"port":(\d+)\}/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      void exited.then(() => reject(new Error(`the API process exited before listening:\n${out}`)));
    });
    const { key, headers, ...rest } = req;
    const answer = await httpCall(`http://127.0.0.1:${port}`, { ...rest, headers: { 'x-api-key': key, ...headers } }).then(
      (res) => res,
      () => undefined,
    );
    if (answer && !answerMayArrive) throw new Error(`the API process answered (${answer.status} ${answer.text}) instead of dying at ${crashAt}`);
    const [, signal] = await exited;
    if (signal !== 'SIGKILL') throw new Error(`the API process ended with ${signal}, not SIGKILL:\n${out}`);
  } finally {
    clearTimeout(guard);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}
