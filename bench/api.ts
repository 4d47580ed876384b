// Payment-link creation and reads through the real HTTP API, PostgreSQL and Temporal (each create
// starts a workflow). Reports throughput and latency percentiles at a few concurrencies, and the
// event-loop delay of this process (which serves the app, and also runs the client and the workers)
// during each measured run.
import { taskQueueName } from '../domain/task-queues.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';
import { runConcurrently, withEventLoopDelay } from './load.js';

const run = (concurrency: number, total: number, call: (i: number) => Promise<void>) =>
  withEventLoopDelay(() => runConcurrently(concurrency, total, call));


export async function benchApi() {
  await startTestTemporal();
  const stack = await startStack();
  try {
    const store = await stack.createStore('Bench');
    await connectAllRails(stack, store.clientId);
    const key = store.keys.test.secretKey;
    const ids: string[] = [];
    const create = async () => {
      const res = await stack.request({ method: 'POST', url: '/v1/payment-links', key, payload: { usdtAmount: '10', enabledRails: ['USDT_BSC', 'USDT_TRON', 'MOBILE_MONEY'] } });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
      ids.push(res.body.id);
    };
    await runConcurrently(4, 20, create); // warm-up
    const results: Record<string, unknown> = {};
    for (const c of [1, 8]) results[`create_c${c}`] = await run(c, 200, create);
    const get = async (i: number) => {
      // Spread over source addresses: the per-IP limit (600/min) is not what is being measured.
      const res = await stack.request({ method: 'GET', url: `/v1/payment-links/${ids[i % ids.length]}`, key, localAddress: `127.0.1.${(i % 50) + 1}` });
      if (res.status !== 200) throw new Error(`get: ${res.status}`);
    };
    results.get_c8 = await run(8, 2000, get);
    // The baseline: bare workflow starts on the same server, as many and as concurrent.
    const queue = taskQueueName(stack.config.temporal.taskQueuePrefix, 'payments');
    const start = async (i: number) => {
      await stack.temporal.workflow.start('systemCheck', { workflowId: `bench-start/${Date.now()}/${i}`, taskQueue: queue });
    };
    for (const c of [1, 8]) results[`rawWorkflowStart_c${c}`] = await run(c, 200, start);
    return results;
  } finally {
    await stack.stop();
    await stopTestTemporal();
  }
}
