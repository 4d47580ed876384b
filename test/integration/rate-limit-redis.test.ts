import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomToken } from '../../domain/ids.js';
import Fastify from 'fastify';
import { registerErrorHandling } from '../../api/plugins/errors.js';
import { limitOf, redisRateLimitStore, registerRateLimits, type RateLimitStore } from '../../api/plugins/rate-limit.js';
import { buildApp } from '../../runtime/http-app.js';
import { RateService } from '../../services/rates/rate-service.js';
import { httpCall } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/**
 * Two API instances sharing the real Redis (127.0.0.1:6379) share one budget per client IP;
 * without REDIS_URL each keeps its own.
 */
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
let stack: Stack;
const stores: RateLimitStore[] = [];
const apps: { close(): Promise<unknown> }[] = [];

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const s of stores) await s.close();
  await stack?.stop();
});

async function apiInstance(): Promise<string> {
  const store = redisRateLimitStore(redisUrl);
  stores.push(store);
  const app = await buildApp({
    config: stack.config, pool: stack.pool, temporal: stack.temporal, rateLimitStore: store,
    rates: new RateService({ testKesPerUsdt: '130', sources: [] }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address() as { port: number };
  apps.push(app);
  return `http://127.0.0.1:${addr.port}`;
}

describe('rate limits through Redis', () => {
  it('lets two API instances share one budget of 120/min for GET /v1/chains', async () => {
    const a = await apiInstance();
    const b = await apiInstance();
    // A fresh source address so earlier runs against the same Redis do not count.
    const ip = `127.0.${Math.floor(Math.random() * 200) + 20}.${Math.floor(Math.random() * 200) + 20}`;
    const statuses: number[] = [];
    for (let i = 0; i < 121; i++) statuses.push((await httpCall(i % 2 ? a : b, { method: 'GET', url: '/v1/chains', localAddress: ip })).status);
    expect(statuses.slice(0, 120).every((s) => s === 200)).toBe(true);
    expect(statuses[120]).toBe(429);
  });

  it('counts a window atomically across processes', async () => {
    const scope = `test-${randomToken(8)}`;
    const limited = async () => {
      const store = redisRateLimitStore(redisUrl);
      stores.push(store);
      const app = Fastify();
      registerErrorHandling(app);
      await registerRateLimits(app, store);
      app.get('/x', { onRequest: limitOf(app, scope, 10) }, async () => ({ ok: true }));
      apps.push(app);
      return app;
    };
    const [a, b] = [await limited(), await limited()];
    const results = await Promise.all(Array.from({ length: 15 }, (_, i) => (i % 2 ? a : b).inject({ method: 'GET', url: '/x' })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(10);
    const refused = results.filter((r) => r.statusCode !== 200);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.statusCode).toBe(429);
      expect(r.json().error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      expect(r.headers['ratelimit-remaining']).toBe('0');
    }
  });
});
