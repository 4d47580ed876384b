// POST /v1/wallets/derive through the whole app (auth, rate limit, validation, the derivation, the
// statement that records it for the watcher) at c=8, against the same pair of addresses (TRON and
// EVM at the same indexes) derived in this process with nothing else, in alternating rounds of one
// run, and against a bare Fastify route doing the route's parts (the pair, one primary-key statement
// through `pg`) served the same way. The app serves from this process pinned to core 0 with a pool of 10; wrk sends the load from
// core 1 (bench/load.ts), where PostgreSQL also runs. Three kinds of load:
// - `repeat`: indexes 0 … 999, each handed out before the round (what most calls are: the spec
//   says repeating the call returns the same addresses), so a derive writes nothing; the app
//   answers their addresses from those it remembers (rails/chain/derive-address.ts).
// - `fresh`: every request a new, ascending index, so every derive raises the store's highest
//   and the gap after it (20 addresses per key) is extended after the answer, in the same process;
//   the fill derived each index before it is asked for, so the app remembers it.
// - `cold`: every request a new index below the others, that nothing derived before: the app
//   derives its pair, as the in-process pair does, and records it (no highest raised).
// The bare route and the in-process pair remember nothing.
// Every answer is checked (bench/guard.ts): one non-2xx answer, a 429 included, ends the bench.
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pg from 'pg';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { openPool } from '../db/pool.js';
import { refreshStaleStatistics } from '../services/system/table-statistics.js';
import { deriveAddress } from '../rails/chain/derive-address.js';
import { buildApp } from '../runtime/http-app.js';
import { RateService } from '../services/rates/rate-service.js';
import { gapFillsSettled } from '../services/wallets/derived-addresses.js';
import { randomAccountXpubs } from '../test/helpers/fixtures.js';
import { httpCall } from '../test/helpers/http.js';
import { startStack } from '../test/helpers/stack.js';
import { startTestTemporal, stopTestTemporal } from '../test/helpers/temporal-server.js';
import { expectCleanLoad, expectOk } from './guard.js';
import { clientsWithinLimit, loadFromChild, pinnedServer, withEventLoopDelay, type EventLoopDelay, type Load } from './load.js';

const concurrency = 8;

/** This process's CPU (user + system) in µs while `work` runs. */
async function cpuOf<T>(work: () => Promise<T> | T): Promise<{ result: T; cpuUs: number }> {
  const before = process.cpuUsage();
  const result = await work();
  const d = process.cpuUsage(before);
  return { result, cpuUs: d.user + d.system };
}

/** Pairs per second of the two derivations alone, over `indexes` in turn, for `seconds`, and how many. */
function inProcessPairs(tron: string, evm: string, indexes: readonly number[], seconds: number): { perSecond: number; count: number } {
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    for (let k = 0; k < 50; k++, n++) {
      const i = indexes[n % indexes.length]!;
      deriveAddress(tron, 'tron', 0, i);
      deriveAddress(evm, 'evm', 0, i);
    }
  }
  return { perSecond: Math.round(n / ((performance.now() - t0) / 1000)), count: n };
}

const spread = (xs: number[]) => ({ min: Math.min(...xs), max: Math.max(...xs) });
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const r2 = (x: number) => Math.round(x * 100) / 100;

export async function benchDeriveRoute(rounds = 3, seconds = 5) {
  await startTestTemporal();
  const stack = await startStack({ TRUST_PROXY: '127.0.0.1', CHAIN_WATCHERS: 'off' });
  const pool = await openPool(stack.config.databaseUrl!, 10, { preparedStatements: stack.config.databasePreparedStatements });
  const app = await buildApp({
    config: stack.config, pool, temporal: stack.temporal, rateLimitStore: memoryRateLimitStore(),
    rates: new RateService({ testKesPerUsdt: stack.config.testKesPerUsdt, sources: [] }),
  });
  let bareDb: pg.Pool | undefined;
  let bare: ReturnType<typeof Fastify> | undefined;
  try {
    await stack.workers.shutdown();
    const store = await stack.createStore('Derive bench');
    const key = store.keys.test.secretKey;
    const xpubs = randomAccountXpubs();
    for (const [kind, xpub] of [['tron', xpubs.tron], ['evm', xpubs.evm]] as const) {
      expectOk(`derive: PUT wallets/${kind}`, await stack.request({ method: 'PUT', url: `/v1/merchant/clients/${store.clientId}/wallets/${kind}`, key, payload: { xpub } }));
    }
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // The route's parts and nothing else: a bare Fastify route that derives the same pair and sends
    // one primary-key statement through `pg` (pool of 10), served by this process the same way.
    bareDb = new pg.Pool({ connectionString: stack.config.databaseUrl!, max: 10 });
    bareDb.on('error', () => undefined);
    const bareApp = Fastify();
    bare = bareApp;
    bareApp.post<{ Body: { index: number } }>('/bare', async (req) => {
      const index = req.body.index;
      const answer = { index, tron: deriveAddress(xpubs.tron, 'tron', 0, index), bsc: deriveAddress(xpubs.evm, 'evm', 0, index) };
      await bareDb!.query({ name: 'bare-derive', text: 'SELECT highest_index FROM derived_index_marks WHERE store_id = $1 AND environment = $2', values: [store.clientId, 'test'] });
      return answer;
    });
    await bareApp.listen({ host: '127.0.0.1', port: 0 });
    const bareBase = `http://127.0.0.1:${(bareApp.server.address() as AddressInfo).port}`;
    expectOk('derive: POST /bare', await httpCall(bareBase, { method: 'POST', url: '/bare', payload: { index: 7 } }));
    // The answer is the pair the baseline derives.
    const probe = await httpCall(base, { method: 'POST', url: '/v1/wallets/derive', payload: { index: 7 }, headers: { 'x-api-key': key, 'x-forwarded-for': '10.255.0.1' } });
    expectOk('derive: POST /v1/wallets/derive {"index":7}', probe);
    if (probe.body.tron !== deriveAddress(xpubs.tron, 'tron', 0, 7) || probe.body.bsc !== deriveAddress(xpubs.evm, 'evm', 0, 7)) {
      throw new Error('derive: the route and the in-process pair disagree');
    }
    // Enough clients that none passes the route's 600 a minute (bench/load.ts).
    const clients = clientsWithinLimit(600, seconds, 10_000);
    const analyzed: string[] = [];
    let clientOffset = 0;
    const load = (indexes: readonly number[], s: number, what: string, to: 'app' | 'bare' = 'app'): Promise<Load & EventLoopDelay> =>
      withEventLoopDelay(() => loadFromChild({
        base: to === 'app' ? base : bareBase, paths: [to === 'app' ? '/v1/wallets/derive' : '/bare'], method: 'POST', bodies: indexes.map((index) => JSON.stringify({ index })),
        headers: { 'content-type': 'application/json', 'x-api-key': key }, connections: concurrency, seconds: s, clients, clientOffset: (clientOffset += clients),
      })).then(async (r) => {
        expectCleanLoad(`derive: POST ${to === 'app' ? '/v1/wallets/derive' : '/bare'} (${what}) for ${s} s`, r);
        // The gap fills of this round run before the next round is timed.
        await gapFillsSettled();
        // And what the stopped workers' statistics pass would have done by now (worker/table-statistics.ts).
        analyzed.push(...(await refreshStaleStatistics(pool)));
        return r;
      });

    const repeatIndexes = Array.from({ length: 1_000 }, (_, i) => i);
    // Each fresh round gets indexes no round used: 60,000 is more than a round sends here.
    let nextFresh = 1_000_000;
    const freshIndexes = () => Array.from({ length: 60_000 }, () => nextFresh++);
    // Cold: indexes below the fresh ones, going down, that nothing derived before (not handed out,
    // not in the gap after the highest, so not remembered by this process): each costs its pair.
    let nextCold = 999_999;
    const coldIndexes = () => Array.from({ length: 60_000 }, () => nextCold--);
    const indexesOf = (kind: 'repeat' | 'fresh' | 'cold') => (kind === 'repeat' ? repeatIndexes : kind === 'fresh' ? freshIndexes() : coldIndexes());

    const result: Record<string, unknown> = { concurrency, seconds, rounds };
    await pinnedServer(async () => {
      // Hand the repeat indexes out once, and warm the route and the derivations.
      await load(repeatIndexes, 3, 'warm-up');
      inProcessPairs(xpubs.tron, xpubs.evm, repeatIndexes, 1);
      for (const kind of ['repeat', 'fresh', 'cold'] as const) {
        const app: Array<Load & EventLoopDelay> = [];
        const pairs: number[] = [];
        // The serving process's CPU per request (its gap fills included) and per in-process pair:
        // what the ratio would be were the serving core the only limit (the shared host's other
        // load moves throughput far more than it moves CPU per request).
        const cpuPerRequest: number[] = [];
        const cpuPerPair: number[] = [];
        const bareRounds: number[] = [];
        for (let r = 0; r < rounds; r++) {
          const indexes = indexesOf(kind);
          const served = await cpuOf(() => load(indexes, seconds, kind));
          app.push(served.result);
          cpuPerRequest.push(Math.round(served.cpuUs / Math.max(1, served.result.reqPerSec * seconds)));
          const derived = await cpuOf(() => inProcessPairs(xpubs.tron, xpubs.evm, indexes, seconds));
          pairs.push(derived.result.perSecond);
          cpuPerPair.push(Math.round(derived.cpuUs / derived.result.count));
          bareRounds.push((await load(indexes, seconds, kind, 'bare')).reqPerSec);
        }
        const ratios = app.map((a, i) => r2(a.reqPerSec / pairs[i]!));
        const best = app.reduce((x, y) => (y.reqPerSec > x.reqPerSec ? y : x));
        result[kind] = {
          app: { perSecond: med(app.map((a) => a.reqPerSec)), rounds: app.map((a) => a.reqPerSec), p50Ms: best.p50Ms, p99Ms: best.p99Ms, eventLoopP99Ms: best.eventLoopP99Ms, eventLoopMaxMs: best.eventLoopMaxMs },
          inProcessPairs: { perSecond: med(pairs), rounds: pairs },
          ratio: med(ratios), ratioSpread: spread(ratios),
          bareRoute: { perSecond: med(bareRounds), rounds: bareRounds }, ratioToBareRoute: r2(med(app.map((a) => a.reqPerSec)) / med(bareRounds)),
          cpuUsPerRequest: med(cpuPerRequest), cpuUsPerPair: med(cpuPerPair), cpuRatio: r2(med(cpuPerPair) / med(cpuPerRequest)),
        };
        console.error(`derive ${kind}:`, JSON.stringify(result[kind]));
        // `--profile`: one more app round of this kind with this (the serving) process's CPU
        // sampled; `--profile-out PREFIX` also writes the raw profile to PREFIX-<kind>.cpuprofile.
        if (process.argv.includes('--profile')) {
          const { startCpuProfile } = await import('./cpu-profile.js');
          const profiling = await startCpuProfile(100);
          await load(indexesOf(kind), seconds, `${kind}, profiled`);
          const out = process.argv.indexOf('--profile-out');
          (result[kind] as Record<string, unknown>).profileApp = await profiling.stop(out > 0 ? `${process.argv[out + 1]}-${kind}.cpuprofile` : undefined);
        }
      }
    });
    // Tables analyzed between rounds by the workers' rule (stale since their last ANALYZE, none within 60 s).
    result.analyzedBetweenRounds = analyzed.length;
    return result;
  } finally {
    await bare?.close();
    await bareDb?.end();
    await app.close();
    await pool.end();
    await stack.stop();
    await stopTestTemporal();
  }
}
