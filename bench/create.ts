// Link creation on one store at c=32 through the whole API (auth, validation, address allocation,
// the link and its watched addresses, the workflow start), beside a bare Fastify + `pg` route that
// writes the same rows in one transaction (counter, ledger, link, watched addresses) and nothing
// else, both with a pool of 10, in alternating rounds of one run; and raw workflow starts on the
// same Temporal. The load comes from wrk in its own process (bench/load.ts), pinned to the other
// core, as is the Temporal dev server; this process only serves, so the event-loop delay measured
// here (`monitorEventLoopDelay`, during each measured round) is the serving loop's. The workflows
// start after the answers (the start hand-off); each app round waits for the last of them. The
// stack's Temporal workers are stopped first: as in the production topology (docs/production.md), the API process runs no workflows,
// and what is measured is creation, not the workflows it starts.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { RateService } from '../services/rates/rate-service.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { openPool } from '../db/pool.js';
import { refreshStaleStatistics } from '../services/system/table-statistics.js';
import { taskQueueName } from '../domain/task-queues.js';
import { newId } from '../domain/ids.js';
import { buildApp } from '../runtime/http-app.js';
import { connectAllRails } from '../test/helpers/fixtures.js';
import { startStack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';
import { sql } from 'slonik';
import { z } from 'zod';
import { expectCleanLoad } from './guard.js';
import { clientsWithinLimit, loadFromChild, pinnedServer, pinTemporalToLoadCore, pinning, runConcurrently, unpin, withEventLoopDelay } from './load.js';

export async function benchCreate(concurrency = 32, seconds = 5) {
  await startTestTemporal();
  const stack = await startStack({ TRUST_PROXY: '127.0.0.1', CHAIN_WATCHERS: 'off' });
  const bareDb = new pg.Pool({ connectionString: stack.config.databaseUrl!, max: 10 });
  bareDb.on('error', () => undefined); // the stack's teardown ends its idle connections: not the bench's failure
  const appDb = await openPool(stack.config.databaseUrl!, 10, { preparedStatements: stack.config.databasePreparedStatements });
  const bare = Fastify();
  const api = await buildApp({
    config: stack.config, pool: appDb, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(),
    rates: new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] }),
  });
  try {
    await stack.workers.shutdown();
    const store = await stack.createStore('Create bench');
    await connectAllRails(stack, store.clientId);
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
          `INSERT INTO payment_links (id, kind, store_id, environment, status, usdt_amount, enabled_rails, evm_address, tron_address, expires_at, workflow_started)
           VALUES ($1, 'payment_link', $2, 'test', 'PENDING', 10, ARRAY['USDT_BSC','USDT_TRON'], $3, $4, now() + interval '1 hour', true)`, [id, store.clientId, evm, tron]);
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
    await api.listen({ host: '127.0.0.1', port: 0 });
    const url = (server: { address(): unknown }) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Enough clients that none passes the create route's 600 a minute (bench/load.ts).
    const clients = clientsWithinLimit(600, seconds, 1_000);
    const analyzed: string[] = [];
    let clientOffset = 0;
    const load = (base: string, path: string, headers: Record<string, string>, body: string, s: number) =>
      withEventLoopDelay(() => loadFromChild({
        base, paths: [path], method: 'POST', body, headers: { 'content-type': 'application/json', ...headers },
        connections: concurrency, seconds: s, clients, clientOffset: (clientOffset += clients),
      })).then(async (r) => {
        // Warm-up rounds included: a refused request is a failure wherever it happens.
        expectCleanLoad(`create: POST ${path} for ${s} s`, r);
        // What the stopped workers' statistics pass would have done by now (worker/table-statistics.ts).
        analyzed.push(...(await refreshStaleStatistics(appDb)));
        return r;
      });
    const app = (s: number) => load(url(api.server), '/v1/payment-links', { 'x-api-key': store.keys.test.secretKey },
      JSON.stringify({ usdtAmount: '10', enabledRails: ['USDT_BSC', 'USDT_TRON'] }), s);
    const bareCall = (s: number) => load(url(bare.server), '/bare', {}, '{}', s);
    const queue = taskQueueName(stack.config.temporal.taskQueuePrefix, 'payments');
    const start = async (i: number) => {
      await stack.temporal.workflow.start('systemCheck', { workflowId: `bench-create/${Date.now()}/${i}`, taskQueue: queue });
    };
    // The links' workflows start after the answers (services/payment-links/start-handoff.ts): each app
    // round is followed by the wait for the last of them, so no start spills into a bare round, and
    // that wait is reported beside the round.
    const unstarted = () => appDb.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM payment_links WHERE NOT workflow_started`);
    const appRound = async (s: number) => {
      const round = await app(s);
      const ended = Date.now();
      while ((await unstarted()) > 0) await new Promise((r) => setTimeout(r, 20));
      return { ...round, allStartedAfterMs: Date.now() - ended };
    };
    type Round = Awaited<ReturnType<typeof app>>;
    const rounds = { app: [] as (Round & { allStartedAfterMs: number })[], bare: [] as Round[] };
    let temporalServer: string[] = [];
    let profile: unknown;
    await pinnedServer(async () => {
      // The orchestrator shares the load generator's core, not the serving one: in any deployment
      // Temporal runs beside the API, not inside its CPU budget (docs/production.md). Found by the
      // CLI this run used; no such process is a failure, not an unpinned run.
      temporalServer = await pinTemporalToLoadCore();
      await appRound(2); // warm-up
      await bareCall(2);
      for (let r = 0; r < 2; r++) {
        rounds.app.push(await appRound(seconds));
        rounds.bare.push(await bareCall(seconds));
      }
      // `--profile`: one more app round with this (the serving) process's CPU sampled; with
      // `--profile-out FILE` the raw profile is also written there (for DevTools or a caller tree).
      if (process.argv.includes('--profile')) {
        const { startCpuProfile } = await import('./cpu-profile.js');
        const profiling = await startCpuProfile(100);
        await appRound(seconds);
        const out = process.argv.indexOf('--profile-out');
        profile = await profiling.stop(out > 0 ? process.argv[out + 1] : undefined);
      }
    });
    unpin(temporalServer);
    const best = <R extends Round>(xs: R[]) => xs.reduce((x, y) => (y.reqPerSec > x.reqPerSec ? y : x));
    const [a, b] = [best(rounds.app), best(rounds.bare)];
    const shape = (x: Round) => ({
      concurrency, seconds, perSecond: x.reqPerSec, p50Ms: x.p50Ms, p99Ms: x.p99Ms, eventLoopP99Ms: x.eventLoopP99Ms, eventLoopMaxMs: x.eventLoopMaxMs,
    });
    return {
      pinned: pinning ? { server: 'core 0', loadAndTemporal: 'core 1', temporalPids: temporalServer } : false,
      app: { ...shape(a), allStartedAfterMs: a.allStartedAfterMs },
      bareInsertsRoute: shape(b),
      ratio: Math.round((a.reqPerSec / b.reqPerSec) * 100) / 100,
      // Tables analyzed between rounds by the workers' rule (stale since their last ANALYZE, none within 60 s).
      analyzedBetweenRounds: analyzed.length,
      rawWorkflowStarts: await withEventLoopDelay(() => runConcurrently(concurrency, 400, start)),
      ...(profile ? { profileApp: profile } : {}),
    };
  } finally {
    await api.close();
    await appDb.end();
    await bare.close();
    await bareDb.end();
    await stack.stop();
    await stopTestTemporal();
  }
}
