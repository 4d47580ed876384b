import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomToken } from '../../domain/ids.js';
import { taskQueueName } from '../../domain/task-queues.js';
import { replayHistories } from '../../runtime/replay.js';
import type { chainWatcher } from '../../workflows/chain-watcher.js';
import type { reconciler } from '../../workflows/reconciler.js';
import type { webhookOutboxSweeper } from '../../workflows/webhook-outbox-sweeper.js';
import { deployTestToken, startAnvil, type Anvil } from '../helpers/anvil.js';
import { maybeRecordHistory } from '../helpers/histories.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

/**
 * The long-running workflows continue as new; their runs are recorded too, so a change to them
 * is held against real histories. And one change, proved: the `signals-are-hints` patch replays
 * a link history recorded before it through today's code.
 */
let anvil: Anvil;
let stack: Stack;

beforeAll(async () => {
  anvil = await startAnvil();
  const usdt = await deployTestToken(anvil, { decimals: 18 });
  stack = await startStack({ RPC_URL_USDT_BSC_TEST: anvil.url, USDT_CONTRACT_USDT_BSC_TEST: usdt.address, CONFIRMATIONS_USDT_BSC: '1' });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await anvil?.stop();
});

/** Starts a workflow and waits until its first run has continued as new; returns that run's id. */
async function firstRunContinued(id: string, start: () => Promise<unknown>): Promise<string> {
  await start();
  const handle = stack.temporal.workflow.getHandle(id);
  const firstRunId = (await handle.describe()).runId;
  await eventually(async () => ((await handle.describe()).runId !== firstRunId ? true : undefined), 'continue-as-new', 30_000);
  expect((await stack.temporal.workflow.getHandle(id, firstRunId).describe()).status.name).toBe('CONTINUED_AS_NEW');
  return firstRunId;
}

describe('long-running workflows', () => {
  it('a chain watcher continues as new carrying its cursor', async () => {
    const id = `chain-watcher/hist-${randomToken(6)}/USDT_BSC/test`;
    const runId = await firstRunContinued(id, () =>
      stack.temporal.workflow.start<typeof chainWatcher>('chainWatcher', {
        workflowId: id,
        taskQueue: taskQueueName(stack.config.temporal.taskQueuePrefix, 'chains'),
        args: [{ rail: 'USDT_BSC', environment: 'test', cursor: null, pollMs: 50, ticksPerRun: 2 }],
      }),
    );
    const handle = stack.temporal.workflow.getHandle(id);
    await maybeRecordHistory(handle, 'chain-watcher-continued-as-new', runId);
    await handle.terminate('test over');
  });

  it('the webhook outbox sweeper continues as new', async () => {
    const id = `webhook-outbox-sweeper/hist-${randomToken(6)}`;
    const runId = await firstRunContinued(id, () =>
      stack.temporal.workflow.start<typeof webhookOutboxSweeper>('webhookOutboxSweeper', {
        workflowId: id,
        taskQueue: taskQueueName(stack.config.temporal.taskQueuePrefix, 'webhooks'),
        args: [{ intervalMs: 50, sweepsPerRun: 2 }],
      }),
    );
    const handle = stack.temporal.workflow.getHandle(id);
    await maybeRecordHistory(handle, 'webhook-outbox-sweeper-continued-as-new', runId);
    await handle.terminate('test over');
  });

  it('the reconciler continues as new', async () => {
    const id = `reconciler/hist-${randomToken(6)}`;
    const runId = await firstRunContinued(id, () =>
      stack.temporal.workflow.start<typeof reconciler>('reconciler', {
        workflowId: id,
        taskQueue: taskQueueName(stack.config.temporal.taskQueuePrefix, 'chains'),
        args: [{ everyMs: 50, runsPerRun: 2 }],
      }),
    );
    const handle = stack.temporal.workflow.getHandle(id);
    await maybeRecordHistory(handle, 'reconciler-continued-as-new', runId);
    await handle.terminate('test over');
  });
});

describe('changing a workflow while links are open', () => {
  it('replays a link history recorded before the signals-are-hints patch through the patched code', async () => {
    const dir = join(process.cwd(), 'test', 'histories');
    const before = await readFile(join(dir, 'payment-link-reorg-then-confirmed.json'), 'utf8');
    const after = await readFile(join(dir, 'payment-link-verified-reorg-then-confirmed.json'), 'utf8');
    // The marker's payload is base64 JSON: {"id":"signals-are-hints",…}
    const marker = Buffer.from('{"id":"signals-are-hints"').toString('base64').slice(0, 24);
    expect(before).not.toContain(marker);
    expect(before).not.toContain('verifyDeposit');
    expect(after).toContain(marker);
    expect(after).toContain('verifyDeposit');
    const printed: string[] = [];
    const failed = await replayHistories(
      [join(dir, 'payment-link-reorg-then-confirmed.json'), join(dir, 'payment-link-verified-reorg-then-confirmed.json')],
      { log: (m: string) => printed.push(m), error: (m: string) => printed.push(m) },
    );
    expect(printed.join('\n')).not.toContain('FAILED');
    expect(failed).toBe(0);
  });
});
