// GET /v1/chains through the whole app (rate limit, routing, error plumbing) against a bare
// Fastify route returning the same JSON, with autocannon, alternating in one run (ratio). The
// load runs in its own process (bench/load-child.ts), so this process only serves, and the
// event-loop delay measured here (`monitorEventLoopDelay`) is the serving loop's.
import Fastify from 'fastify';
import { buildApp } from '../runtime/http-app.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { RateService } from '../activities/rates/rate-service.js';
import { railIds } from '../domain/rails.js';
import { railRecord } from '../rails/registry.js';
import { loadFromChild, median, withEventLoopDelay, type EventLoopDelay, type Load } from './load.js';
import { loadConfig } from '../config/config.js';

// The limiter counts every request; each one comes from another client (bench/load.ts clientAddress).
let clients = 0;

function load(base: string, seconds: number): Promise<Load & EventLoopDelay> {
  return withEventLoopDelay(() => loadFromChild({ base, paths: ['/v1/chains'], connections: 50, seconds, clientOffset: (clients += 2_000_000) }));
}

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
  bare.get('/v1/chains', async () => body);
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const base = (a: { server: { address(): unknown } }) => `http://127.0.0.1:${(a.server.address() as { port: number }).port}`;
  const malipo: Array<Load & EventLoopDelay> = [];
  const baseline: Array<Load & EventLoopDelay> = [];
  await loadFromChild({ base: base(app), paths: ['/v1/chains'], connections: 50, seconds: 2, clientOffset: (clients += 2_000_000) }); // warm-up
  for (let i = 0; i < rounds; i++) {
    malipo.push(await load(base(app), seconds));
    baseline.push(await load(base(bare), seconds));
  }
  await app.close();
  await bare.close();
  const m = median(malipo);
  const b = median(baseline);
  return { malipo: m, bareFastify: b, ratio: Math.round((m.reqPerSec / b.reqPerSec) * 100) / 100 };
}
