// GET /v1/chains through the whole app (rate limit, routing, error plumbing) against a bare
// Fastify route with a response schema sending the same bytes, with wrk (bench/load.ts),
// alternating in one run (ratio). The load runs in its own process, pinned to another core than
// this one where there are two, so this process only serves, and the event-loop delay measured
// here (`monitorEventLoopDelay`) is the serving loop's.
import Fastify from 'fastify';
import { buildApp } from '../runtime/http-app.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { RateService } from '../services/rates/rate-service.js';
import { railIds } from '../domain/rails.js';
import { railRecord } from '../rails/registry.js';
import { clientsWithinLimit, loadFromChild, median, pinnedServer, withEventLoopDelay, type EventLoopDelay, type Load } from './load.js';
import { loadConfig } from '../config/config.js';
import { httpCall } from '../test/helpers/http.js';
import { expectCleanLoad, expectOk } from './guard.js';

// The limiter is on, with its in-memory store, and counts every request. Who sends the load
// matters to what it costs: one new client per request (what this bench did before) makes the
// store create an entry for every request and, past its 10,000 clients, evict one too, which no
// real traffic does; a few hundred clients at this rate would each pass the route's 120 a minute
// within a second and measure the 429 path instead. So the load comes from a population of
// clients each staying within its limit (bench/load.ts clientsWithinLimit): the limiter counts
// every request on an entry it holds, as for real clients within their budgets. Each round gets
// clients of its own, so no client's window spans two rounds.
const perMinute = 120;
const maxPerSecond = 100_000;
let offset = 0;

function load(base: string, seconds: number): Promise<Load & EventLoopDelay> {
  const clients = clientsWithinLimit(perMinute, seconds, maxPerSecond);
  const clientOffset = offset;
  offset += clients;
  return withEventLoopDelay(() => loadFromChild({ base, paths: ['/v1/chains'], connections: 50, seconds, clients, clientOffset })).then((r) => {
    expectCleanLoad(`http: GET ${base}/v1/chains for ${seconds} s`, r);
    return r;
  });
}

/** The same rail record as the API's, as a JSON schema, properties in the order the API writes them. */
const railSchema = {
  type: 'object',
  properties: {
    network: { type: 'string' }, displayName: { type: 'string' }, tokenSymbol: { type: 'string' }, chainLogoUrl: { type: 'string' },
    estimatedConfirmationSeconds: { type: 'number' }, tagline: { type: 'string' }, tokenStandard: { type: 'string' },
    tokenLogoUrl: { type: 'string' }, estimatedFeeUsd: { type: 'string' },
  },
  required: ['network', 'displayName', 'tokenSymbol', 'chainLogoUrl', 'estimatedConfirmationSeconds', 'tagline'],
} as const;

export async function benchHttp(rounds = 3, seconds = 5) {
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', TRUST_PROXY: '127.0.0.1' });
  // The route is public and touches neither PostgreSQL nor Temporal: those deps are never called.
  const app = await buildApp({
    config, pool: undefined as never, temporal: undefined as never,
    rateLimitStore: memoryRateLimitStore(),
    rates: new RateService({ testKesPerUsdt: '130', sources: [] }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const bare = Fastify();
  const body = { chains: railIds.map((id) => railRecord(id, config.publicBaseUrl)) };
  bare.get('/v1/chains', { schema: { response: { 200: { type: 'object', properties: { chains: { type: 'array', items: railSchema } }, required: ['chains'] } } } }, async () => body);
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const base = (a: { server: { address(): unknown } }) => `http://127.0.0.1:${(a.server.address() as { port: number }).port}`;
  const [fromApp, fromBare] = [await httpCall(base(app), { method: 'GET', url: '/v1/chains' }), await httpCall(base(bare), { method: 'GET', url: '/v1/chains' })];
  expectOk('http: GET /v1/chains (app)', fromApp);
  expectOk('http: GET /v1/chains (bare)', fromBare);
  if (fromApp.text !== fromBare.text) throw new Error('the bare route does not send the same bytes as the app');
  let profile: unknown;
  const malipo: Array<Load & EventLoopDelay> = [];
  const baseline: Array<Load & EventLoopDelay> = [];
  await pinnedServer(async () => {
    await load(base(app), 2); // warm-up
    await load(base(bare), 2);
    for (let i = 0; i < rounds; i++) {
      malipo.push(await load(base(app), seconds));
      baseline.push(await load(base(bare), seconds));
    }
    // `--profile`: one more app load with this process's CPU sampled (where a request's time goes).
    if (process.argv.includes('--profile')) {
      const { startCpuProfile } = await import('./cpu-profile.js');
      const profiling = await startCpuProfile(100);
      await load(base(app), seconds);
      const out = process.argv.indexOf('--profile-out');
      profile = await profiling.stop(out > 0 ? process.argv[out + 1] : undefined);
    }
  });
  await app.close();
  await bare.close();
  const m = median(malipo);
  const b = median(baseline);
  return { malipo: m, bareFastify: b, ratio: Math.round((m.reqPerSec / b.reqPerSec) * 100) / 100, ...(profile ? { profileApp: profile } : {}) };
}
