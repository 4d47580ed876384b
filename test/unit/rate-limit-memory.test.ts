import { afterEach, describe, expect, it, jest } from '@jest/globals';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { limitHookOf, limitOf, memoryRateLimitStore, registerRateLimits, windowSeconds } from '../../api/plugins/rate-limit.js';
import { registerErrorHandling } from '../../api/plugins/errors.js';

/**
 * The in-memory limit counts synchronously, outside @fastify/rate-limit's per-request promise
 * chain: it must answer exactly as the plugin's own memory store (LocalStore) does, request after
 * request, across window ends and past the number of clients it remembers.
 */
let apps: FastifyInstance[] = [];
afterEach(async () => {
  jest.restoreAllMocks();
  for (const app of apps) await app.close();
  apps = [];
});

async function appWithLimit(perMinute: number) {
  const app = Fastify();
  apps.push(app);
  registerErrorHandling(app);
  await registerRateLimits(app, memoryRateLimitStore());
  const client = (request: FastifyRequest) => String(request.headers['x-client']);
  app.get('/hook', { onRequest: limitHookOf(app, 'hook', perMinute, client) }, async () => ({ ok: true }));
  app.get('/async', { onRequest: limitOf(app, 'async', perMinute, client) }, async () => ({ ok: true }));
  // The plugin's own count (its LocalStore), for the same keys, as the reference.
  const reference = app.createRateLimit({ max: perMinute, keyGenerator: (request) => `ref:${client(request)}` });
  await app.ready();
  return { app, reference };
}

const headersOf = (res: { headers: Record<string, unknown> }) =>
  Object.fromEntries(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'].map((h) => [h, res.headers[h]]));

describe('the in-memory rate limit', () => {
  it('answers as the plugin\'s memory store, request after request, through a window\'s end', async () => {
    let now = 1_700_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const { app, reference } = await appWithLimit(3);
    for (const [step, client] of [[0, 'a'], [1_000, 'a'], [0, 'b'], [2_500, 'a'], [0, 'a'], [30_000, 'a'], [29_000, 'a'], [1_000, 'a'], [500, 'b'], [0, 'a']] as const) {
      now += step;
      const ref = await reference({ headers: { 'x-client': client }, routeOptions: { config: {} } } as never);
      if (ref.isAllowed) throw new Error('no allow list here');
      const expected = {
        'ratelimit-limit': String(ref.max),
        'ratelimit-remaining': String(ref.remaining),
        'ratelimit-reset': String(Math.max(1, ref.ttlInSeconds)),
        'retry-after': ref.isExceeded ? String(Math.max(1, ref.ttlInSeconds)) : undefined,
      };
      for (const url of ['/hook', '/async']) {
        const res = await app.inject({ method: 'GET', url, headers: { 'x-client': client } });
        expect([url, res.statusCode]).toEqual([url, ref.isExceeded ? 429 : 200]);
        expect(headersOf(res)).toEqual(expected);
        if (ref.isExceeded) expect(res.json().error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error' });
      }
    }
  });

  it('keeps one count per name and limit, wherever it is checked', async () => {
    const { app } = await appWithLimit(2);
    const shared = limitHookOf(app, 'hook', 2);
    expect(limitHookOf(app, 'hook', 2)).toBe(shared);
    const statuses = [];
    for (const url of ['/hook', '/hook', '/hook']) statuses.push((await app.inject({ method: 'GET', url, headers: { 'x-client': 'c' } })).statusCode);
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('forgets the least recently seen client first, past the clients it remembers', async () => {
    const now = 1_700_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const { app } = await appWithLimit(1);
    const get = (client: string) => app.inject({ method: 'GET', url: '/hook', headers: { 'x-client': client } });
    expect((await get('old')).statusCode).toBe(200);
    expect((await get('kept')).statusCode).toBe(200);
    // 9,999 more clients; 'kept' is seen again meanwhile, so 'old' is the one forgotten.
    for (let i = 0; i < 9_998; i++) await get(`c${i}`);
    expect((await get('kept')).statusCode).toBe(429);
    await get('one-more');
    expect((await get('kept')).statusCode).toBe(429);
    expect((await get('old')).statusCode).toBe(200);
    expect(windowSeconds).toBe(60);
  }, 120_000);
});
