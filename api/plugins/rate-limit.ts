import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { AppError } from '../../domain/errors.js';

/**
 * Per-IP limits per minute (DESIGN.md), counted by @fastify/rate-limit: in this process's memory,
 * or in Redis (one atomic script per request) so every API process shares one budget. A window
 * starts at a client's first request and lasts 60 s.
 */
export const windowSeconds = 60;

/** Where the counts live; the composition root makes one per process and closes it at shutdown. */
export interface RateLimitStore {
  /** The Redis shared by every API process; without it the counts stay in this process. */
  readonly redis?: Redis;
  close(): Promise<void>;
}

export function memoryRateLimitStore(): RateLimitStore {
  return { async close() {} };
}

export function redisRateLimitStore(url: string): RateLimitStore {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  return {
    redis,
    async close() {
      redis.disconnect();
    },
  };
}

/** Clients remembered per limit in memory (least recently seen forgotten first). */
const memoryClientsPerLimit = 10_000;

export async function registerRateLimits(app: FastifyInstance, store: RateLimitStore): Promise<void> {
  await app.register(rateLimit, {
    // No limit of its own: each route and page asks for its limit through `limitOf`.
    global: false,
    timeWindow: windowSeconds * 1000,
    redis: store.redis,
    nameSpace: 'malipo:rl:',
    cache: memoryClientsPerLimit,
  });
}

/**
 * Counts one request against a named limit and throws a 429 `rate_limited` with `Retry-After`
 * once the window's limit is passed; `RateLimit-*` headers go on every answer. The same name and
 * limit share one count wherever it is checked (the dashboard's M-Pesa form and the API route).
 */
export type Limit = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** Per app: the plugin's `createRateLimit` is one function, inherited by every scope of the app. */
const limits = new WeakMap<object, Map<string, Limit>>();

export function limitOf(app: FastifyInstance, name: string, perMinute: number, by: (request: FastifyRequest) => string = (request) => normalizeIP(request.ip)): Limit {
  const create = app.createRateLimit;
  let byName = limits.get(create);
  if (!byName) limits.set(create, (byName = new Map()));
  const key = `${name}:${perMinute}`;
  let limit = byName.get(key);
  if (!limit) {
    // The plugin runs its own hook once per request, so a page under two limits (all pages, then
    // sign-in) counts through `createRateLimit` and writes the answer here.
    const count = create({ max: perMinute, keyGenerator: (request) => `${name}:${by(request)}` });
    limit = async (request, reply) => {
      const r = await count(request);
      if (r.isAllowed) return;
      const headers = {
        'RateLimit-Limit': String(r.max),
        'RateLimit-Remaining': String(r.remaining),
        'RateLimit-Reset': String(Math.max(1, r.ttlInSeconds)),
      };
      reply.headers(headers);
      if (!r.isExceeded) return;
      const retry = headers['RateLimit-Reset'];
      throw new AppError('rate_limited', `Too many requests: at most ${r.max} per minute. Retry in ${retry} s.`, undefined, {
        ...headers,
        'Retry-After': retry,
      });
    };
    byName.set(key, limit);
  }
  return limit;
}
