// GET /v1/chains through the whole app (rate limit, routing, error plumbing) against a bare
// Fastify route returning the same JSON, with autocannon, alternating in one run (ratio).
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { buildApp } from '../runtime/http-app.js';
import { memoryRateLimitStore } from '../api/plugins/rate-limit.js';
import { RateService } from '../activities/rates/rate-service.js';
import { railIds } from '../domain/rails.js';
import { railRecord } from '../rails/registry.js';
import { clientAddress } from './load.js';
import { loadConfig } from '../config/config.js';

// The limiter counts every request; each one comes from another client (bench/load.ts clientAddress).
let client = 0;

async function load(url: string, seconds: number) {
  const r = await autocannon({
    url, connections: 50, duration: seconds,
    requests: [{ setupRequest: (req: any) => ({ ...req, headers: { ...req.headers, 'x-forwarded-for': clientAddress(client++) } }) }],
  });
  return { reqPerSec: Math.round(r.requests.average), p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx };
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
  const url = (a: typeof bare) => `http://127.0.0.1:${(a.server.address() as { port: number }).port}/v1/chains`;
  const malipo: unknown[] = [];
  const baseline: unknown[] = [];
  for (let i = 0; i < rounds; i++) {
    malipo.push(await load(url(app as never), seconds));
    baseline.push(await load(url(bare), seconds));
  }
  await app.close();
  await bare.close();
  const median = (xs: any[]) => [...xs].sort((a, b) => a.reqPerSec - b.reqPerSec)[xs.length >> 1];
  const m = median(malipo);
  const b = median(baseline);
  return { malipo: m, bareFastify: b, ratio: Math.round((m.reqPerSec / b.reqPerSec) * 100) / 100 };
}
