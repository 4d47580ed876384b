import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { BoundedCache } from '../../domain/bounded-cache.js';
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

/** The apps (by their plugin's `createRateLimit`) whose counts stay in this process's memory. */
const inMemory = new WeakSet<object>();

export async function registerRateLimits(app: FastifyInstance, store: RateLimitStore): Promise<void> {
  await app.register(rateLimit, {
    // No limit of its own: each route and page asks for its limit through `limitOf`.
    global: false,
    timeWindow: windowSeconds * 1000,
    redis: store.redis,
    nameSpace: 'malipo:rl:',
    cache: memoryClientsPerLimit,
  });
  if (!store.redis) inMemory.add(app.createRateLimit);
}

/**
 * Counts one request against a named limit and throws a 429 `rate_limited` with `Retry-After`
 * once the window's limit is passed; `RateLimit-*` headers go on every answer. The same name and
 * limit share one count wherever it is checked (the dashboard's M-Pesa form and the API route).
 */
export type Limit = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** Per app: the plugin's `createRateLimit` is one function, inherited by every scope of the app. */
const limits = new WeakMap<object, Map<string, Limit & { hook: LimitHook }>>();

/** The same count as a callback hook (`onRequest`): with the memory store, no promise per request. */
export type LimitHook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void;

/** What counting one request answers, as @fastify/rate-limit's `createRateLimit` does. */
interface Verdict {
  max: number;
  remaining: number;
  ttlInSeconds: number;
  isExceeded: boolean;
}

const defaultBy = (request: FastifyRequest) => normalizeIP(request.ip);

export function limitOf(app: FastifyInstance, name: string, perMinute: number, by: (request: FastifyRequest) => string = defaultBy): Limit {
  return limitWithHook(app, name, perMinute, by);
}

/** `limitOf` as a callback hook, for a route's `onRequest`. */
export function limitHookOf(app: FastifyInstance, name: string, perMinute: number, by: (request: FastifyRequest) => string = defaultBy): LimitHook {
  return limitWithHook(app, name, perMinute, by).hook;
}

/**
 * A limit counted in this process's memory even when the app counts in Redis: for the probes
 * (GET /health, GET /ready), which must answer whatever state Redis is in. Counted through Redis,
 * a Redis that is away or hangs would fail or hold every probe before the route could say so
 * (and a liveness probe failing on it would restart healthy processes).
 */
export function localLimitHookOf(app: FastifyInstance, name: string, perMinute: number): LimitHook {
  return limitWithHook(app, name, perMinute, defaultBy, true).hook;
}

function limitWithHook(app: FastifyInstance, name: string, perMinute: number, by: (request: FastifyRequest) => string, local = false): Limit & { hook: LimitHook } {
  const create = app.createRateLimit;
  let byName = limits.get(create);
  if (!byName) limits.set(create, (byName = new Map()));
  const key = `${name}:${perMinute}${local ? ':local' : ''}`;
  let limit = byName.get(key);
  if (!limit) {
    // Not the plugin's own hook (it runs once per request, and a page may be under two limits:
    // all pages, then sign-in): each limit counts here and writes its answer. Redis counts through
    // the plugin's `createRateLimit`; memory counts in `memoryCounter`, the same rule without the
    // plugin's promise chain per request (test/unit/rate-limit-memory.test.ts holds them equal).
    const keyOf = (request: FastifyRequest) => `${name}:${by(request)}`;
    const answer = (r: Verdict, reply: FastifyReply): AppError | undefined => {
      const headers = {
        'RateLimit-Limit': String(r.max),
        'RateLimit-Remaining': String(r.remaining),
        'RateLimit-Reset': String(Math.max(1, r.ttlInSeconds)),
      };
      reply.headers(headers);
      if (!r.isExceeded) return undefined;
      const retry = headers['RateLimit-Reset'];
      return new AppError('rate_limited', `Too many requests: at most ${r.max} per minute. Retry in ${retry} s.`, undefined, {
        ...headers,
        'Retry-After': retry,
      });
    };
    if (local || inMemory.has(create)) {
      const count = memoryCounter(perMinute);
      const hook: LimitHook = (request, reply, done) => {
        let refusal: AppError | undefined;
        try {
          refusal = answer(count(keyOf(request)), reply);
        } catch (err) {
          return done(err as Error);
        }
        done(refusal);
      };
      limit = Object.assign(async (request: FastifyRequest, reply: FastifyReply) => {
        const refusal = answer(count(keyOf(request)), reply);
        if (refusal) throw refusal;
      }, { hook });
    } else {
      const count = create({ max: perMinute, keyGenerator: keyOf });
      const run = async (request: FastifyRequest, reply: FastifyReply) => {
        const r = await count(request);
        if (r.isAllowed) return;
        const refusal = answer(r, reply);
        if (refusal) throw refusal;
      };
      const hook: LimitHook = (request, reply, done) => {
        run(request, reply).then(() => done(), done);
      };
      limit = Object.assign(run, { hook });
    }
    byName.set(key, limit);
  }
  return limit;
}

/**
 * The memory store's count, as @fastify/rate-limit's LocalStore keeps it (a window of
 * `windowSeconds` from a client's first request; the `memoryClientsPerLimit` most recently seen
 * clients remembered), counted synchronously: the plugin's path costs a promise, a callback and
 * several awaits per request for a lookup in a map.
 */
function memoryCounter(max: number): (key: string) => Verdict {
  const windowMs = windowSeconds * 1000;
  const clients = new BoundedCache<string, { current: number; startMs: number }>(memoryClientsPerLimit);
  return (key) => {
    const now = Date.now();
    // Read as the most recently seen: the least recently seen client is the one forgotten.
    let entry = clients.get(key);
    if (!entry || entry.startMs + windowMs <= now) {
      entry = { current: 1, startMs: now };
      clients.set(key, entry);
    } else {
      entry.current++;
    }
    const ttl = windowMs - (now - entry.startMs);
    return { max, remaining: Math.max(0, max - entry.current), ttlInSeconds: Math.ceil(ttl / 1000), isExceeded: entry.current > max };
  };
}
