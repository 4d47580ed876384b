import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { NativeConnection } from '@temporalio/worker';
import { createWebhookActivities } from '../../activities/webhooks/index.js';
import { insertEvent } from '../../db/event-repo.js';
import { createWorkers } from '../../worker/worker.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { encryptionEnv, loopbackWebhooks, suiteDispatches } from '../helpers/webhook-harness.js';
import { verifyWebhook, WebhookReceiver } from '../helpers/webhook-receiver.js';
import { sharedWorkflowBundle } from '../helpers/workflow-bundle.js';

let stack: Stack;
let receiver: WebhookReceiver;
let child: ChildProcess | undefined;
// One key for the test's workers and the spawned worker process: both decrypt the secrets (and may reach the loopback receiver).
const encryption = { ...loopbackWebhooks, ...encryptionEnv() };
beforeAll(async () => {
  stack = await startStack({ ...encryption, ...suiteDispatches });
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await stack?.stop();
  await receiver?.down();
});

/** A worker in its own process (`malipo worker`), so it can really be killed with SIGKILL. */
async function spawnWorker(): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['bin/malipo.mjs', 'worker'], {
    env: {
      ...process.env,
      DATABASE_URL: stack.config.databaseUrl!,
      TEMPORAL_ADDRESS: stack.config.temporal.address!,
      TASK_QUEUE_PREFIX: stack.config.temporal.taskQueuePrefix,
      LOG_LEVEL: 'silent',
      ...encryption,
      // No outbox relay in it either: it would take the event before this test hands it to its delivery workflow.
      ...suiteDispatches,
      NODE_OPTIONS: '',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  await receiver.waitFor(() => out.includes('Malipo is running.'), 'the worker process to start', 60_000);
  return proc;
}

it('delivers with the same webhook-id after the worker is killed mid-delivery', async () => {
  await stack.workers.shutdown();
  child = await spawnWorker();
  const store = await stack.createStore();
  receiver.on('/kill', (_req, nth) => (nth === 1 ? { status: 200, hang: true } : { status: 200 }));
  const ep = (await stack.request({ method: 'POST', url: '/v1/webhook-endpoints', key: store.keys.test.secretKey, payload: { url: receiver.url('/kill') } })).body;
  const event = await insertEvent(stack.pool, {
    storeId: store.clientId, environment: 'test', type: 'payment_link.confirmed', dedupeKey: 'kill-1', data: { id: 'pl_x' }, createdAt: new Date().toISOString(),
  });
  await createWebhookActivities({ pool: stack.pool, temporal: stack.temporal, config: stack.config }).dispatchEventToWorkflows({ eventId: event.id });
  await receiver.waitFor(() => receiver.requestsTo('/kill').length === 1, 'the first attempt to arrive');

  child.kill('SIGKILL');
  await once(child, 'exit');
  child = undefined;
  const connection = await NativeConnection.connect({ address: stack.config.temporal.address! });
  const workers = await createWorkers({ connection, namespace: stack.config.temporal.namespace, deps: { pool: stack.pool, config: stack.config, temporal: stack.temporal }, workflowBundle: sharedWorkflowBundle() });
  const running = workers.run();
  try {
    const result = await stack.temporal.workflow.getHandle(`webhook-delivery/${event.id}/${ep.id}`).result();
    expect(result).toMatchObject({ outcome: 'delivered', attempts: 1 });
    const got = receiver.requestsTo('/kill');
    expect(got).toHaveLength(2);
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([event.id, event.id]);
    for (const r of got) expect(verifyWebhook(ep.secret, r)).toBeTruthy();
    const log = (await stack.request({ method: 'GET', url: `/v1/webhook-endpoints/${ep.id}/deliveries`, key: store.keys.test.secretKey })).body.data;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ eventId: event.id, attempt: 1, status: 'succeeded', responseStatus: 200 });
  } finally {
    await workers.shutdown();
    await running;
    await connection.close();
  }
}, 90_000);
