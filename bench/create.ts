// Link creation on one store at c=32 through the whole app (auth, validation, address allocation,
// the link and its watched addresses, the workflow start), beside a bare Fastify + `pg` route that
// writes the same rows in one transaction (counter, ledger, link, watched addresses) and nothing
// else, and beside raw workflow starts on the same Temporal, in one run. The app serves from this
// process, which also runs the HTTP client and the stack's Temporal workers: the event-loop delay
// measured here (`monitorEventLoopDelay`, during each measured round only) is an upper bound on the
// serving loop's.
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { taskQueueName } from '../domain/task-queues.js';
import { newId } from '../domain/ids.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { httpCall } from '../test/helpers/http.js';
import { startStack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';
import { runConcurrently, withEventLoopDelay } from './load.js';

export async function benchCreate(concurrency = 32, total = 400) {
  await startTestTemporal();
  const stack = await startStack();
  const bareDb = new pg.Pool({ connectionString: stack.config.databaseUrl!, max: 10 });
  const bare = Fastify();
  try {
    const store = await stack.createStore('Create bench');
    await connectAllRails(stack, store.clientId);
    const key = store.keys.test.secretKey;
    const app = async (i: number) => {
      const res = await stack.request({
        method: 'POST', url: '/v1/payment-links', key, localAddress: `127.0.3.${(i % 50) + 1}`,
        payload: { usdtAmount: '10', enabledRails: ['USDT_BSC', 'USDT_TRON'] },
      });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
    };
    bare.post('/bare', async () => {
      const id = newId('paymentLink');
      const [evm, tron] = [`0x${randomBytes(20).toString('hex')}`, `T${randomBytes(16).toString('hex')}`];
      const c = await bareDb.connect();
      try {
        await c.query('BEGIN');
        for (const family of ['evm', 'tron']) {
          const { rows } = await c.query(
            `INSERT INTO link_address_counters (family, public_key, next_index) VALUES ($1, 'bench', 1)
             ON CONFLICT (family, public_key) DO UPDATE SET next_index = link_address_counters.next_index + 1 RETURNING next_index - 1 AS i`, [family]);
          await c.query('INSERT INTO link_addresses (family, address, public_key, derivation_index, owner_id) VALUES ($1, $2, $3, $4, $5)',
            [family, family === 'evm' ? evm : tron, 'bench', rows[0].i, id]);
        }
        await c.query(
          `INSERT INTO payment_links (id, kind, store_id, environment, status, usdt_amount, enabled_rails, evm_address, tron_address, expires_at)
           VALUES ($1, 'payment_link', $2, 'test', 'PENDING', 10, ARRAY['USDT_BSC','USDT_TRON'], $3, $4, now() + interval '1 hour')`, [id, store.clientId, evm, tron]);
        for (const [family, address] of [['evm', evm], ['tron', tron]]) {
          await c.query(`INSERT INTO watched_addresses (family, environment, address, owner_kind, owner_id, store_id, watch_until)
            VALUES ($1, 'test', $2, 'payment_link', $3, $4, now() + interval '1 day')`, [family, address, id, store.clientId]);
        }
        await c.query('COMMIT');
      } catch (err) {
        await c.query('ROLLBACK');
        throw err;
      } finally {
        c.release();
      }
      return { id };
    });
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
    const bareCall = async () => {
      const res = await httpCall(bareUrl, { method: 'POST', url: '/bare', payload: {} });
      if (res.status !== 200) throw new Error(`bare: ${res.status}`);
    };
    const queue = taskQueueName(stack.config.temporal.taskQueuePrefix, 'payments');
    const start = async (i: number) => {
      await stack.temporal.workflow.start('systemCheck', { workflowId: `bench-create/${Date.now()}/${i}`, taskQueue: queue });
    };
    await runConcurrently(8, 40, app); // warm-up
    await runConcurrently(8, 40, bareCall);
    const measured = (call: (i: number) => Promise<void>) => withEventLoopDelay(() => runConcurrently(concurrency, total, call));
    type Round = Awaited<ReturnType<typeof measured>>;
    const rounds = { app: [] as Round[], bare: [] as Round[] };
    for (let r = 0; r < 2; r++) {
      rounds.app.push(await measured(app));
      rounds.bare.push(await measured(bareCall));
    }
    const best = (xs: typeof rounds.app) => xs.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
    const [a, b] = [best(rounds.app), best(rounds.bare)];
    return {
      app: a,
      bareInsertsRoute: b,
      ratio: Math.round((a.perSecond / b.perSecond) * 100) / 100,
      rawWorkflowStarts: await measured(start),
    };
  } finally {
    await bare.close();
    await bareDb.end();
    await stack.stop();
    await stopTestTemporal();
  }
}
