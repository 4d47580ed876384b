import { Redis } from 'ioredis';
import { AppError } from '../../domain/errors.js';

/** Fixed 60-second windows per client IP (DESIGN.md). The window start is the epoch minute. */
export const windowSeconds = 60;

export interface RateLimitStore {
  /** Adds one hit and returns the count in the current window. */
  hit(key: string, windowStart: number): Promise<number>;
  close(): Promise<void>;
}

export function memoryRateLimitStore(): RateLimitStore {
  let currentWindow = 0;
  let counts = new Map<string, number>();
  return {
    async hit(key, windowStart) {
      if (windowStart !== currentWindow) {
        currentWindow = windowStart;
        counts = new Map();
      }
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      return n;
    },
    async close() {},
  };
}

/** Shared across API replicas: one INCR per request, the key expires with its window. */
export function redisRateLimitStore(url: string): RateLimitStore {
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  return {
    async hit(key, windowStart) {
      const k = `malipo:rl:${windowStart}:${key}`;
      const [[, n]] = (await redis.multi().incr(k).expire(k, windowSeconds * 2).exec()) as [[unknown, number]];
      return n;
    },
    async close() {
      redis.disconnect();
    },
  };
}

export interface RateLimitResult {
  headers: Record<string, string>;
}

/** Counts the request and throws a 429 with `Retry-After` once the window's limit is passed. */
export async function checkRateLimit(
  store: RateLimitStore,
  scope: string,
  ip: string,
  limit: number,
  nowMs: number,
): Promise<RateLimitResult> {
  const windowStart = Math.floor(nowMs / 1000 / windowSeconds) * windowSeconds;
  const count = await store.hit(`${scope}:${ip}`, windowStart);
  const reset = Math.max(1, windowStart + windowSeconds - Math.floor(nowMs / 1000));
  const headers = {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, limit - count)),
    'RateLimit-Reset': String(reset),
  };
  if (count > limit) {
    throw new AppError('rate_limited', `Too many requests: at most ${limit} per minute. Retry in ${reset} s.`, undefined, {
      ...headers,
      'Retry-After': String(reset),
    });
  }
  return { headers };
}
