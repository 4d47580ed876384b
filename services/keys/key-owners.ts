import { checkPublishableKey, checkSecretKey, recordKeyUse, type KeyCheck, type KeyOwner } from '../../db/api-key-repo.js';
import { BoundedCache } from '../../domain/bounded-cache.js';
import { sha256Base64url } from '../../domain/crypto/sha256.js';
import { AppError } from '../../domain/errors.js';
import type { ServiceDeps } from '../deps.js';

export type { KeyOwner };

/** Writing last_used_at at most this often per key and process (the repository also guards it). */
const lastUseResolutionMs = 60_000;
/** Keys remembered per process at most; the least recently used are forgotten first. */
const cacheCapacity = 10_000;

interface Remembered {
  owner: KeyOwner;
  /** Until when the answer may be reused: the cache lifetime, or the end of a rolled key's grace. */
  until: number;
  useRecordedAt: number;
}

/**
 * Keys that authenticated, per pool (one per API process and database), by a digest of the
 * presented key: the key itself is never kept. Only successes are remembered, so a refusal is
 * always read fresh, and a key revoked or rolled here is forgotten at once (forgetKeys).
 */
const remembered = new WeakMap<object, BoundedCache<string, Remembered>>();
/**
 * How many times `forgetKeys` ran, per pool. A check that read the database before a revoke
 * committed would otherwise store its stale success after the cache was cleared; it stores its
 * answer only if no forgetting happened since its read began.
 */
const generations = new WeakMap<object, number>();

function cacheOf(pool: object): BoundedCache<string, Remembered> {
  let cache = remembered.get(pool);
  if (!cache) remembered.set(pool, (cache = new BoundedCache(cacheCapacity)));
  return cache;
}

/**
 * Forgets every key this process remembered for the pool's database: called when a key is
 * revoked or rolled here, so this process refuses it from the next request (a check already
 * reading the key keeps its answer for itself and does not remember it). Other processes
 * refuse it once their memory of it ends (API_KEY_CACHE_SECONDS, 5 s by default).
 */
export function forgetKeys(pool: object): void {
  generations.set(pool, (generations.get(pool) ?? 0) + 1);
  remembered.get(pool)?.clear();
}

/** What a presented key is remembered by: a digest of its kind and itself (the key is never kept). */
const digestOf = (kind: 'secret' | 'publishable', key: string) => sha256Base64url(`${kind}\0${key}`);

/**
 * The owner of a key this process remembers and may still reuse, when nothing is due for it (no
 * last-use write): answered without a promise or a statement. Otherwise undefined, and
 * `ownerOfKey` decides (a refusal is never remembered, so it is always read fresh).
 */
export function rememberedOwnerOfKey(pool: object, kind: 'secret' | 'publishable', key: string): KeyOwner | undefined {
  const hit = remembered.get(pool)?.get(digestOf(kind, key));
  if (!hit) return undefined;
  const now = Date.now();
  return hit.until > now && now - hit.useRecordedAt < lastUseResolutionMs ? hit.owner : undefined;
}

/**
 * The owner of a key that still authenticates, or the 401 that says why not: unknown, revoked,
 * or rolled and past its grace period. Telling these apart helps only whoever holds the key.
 * A key that authenticated is remembered for `apiKeyCacheSeconds`, so the hot paths do not read
 * it on every request.
 */
export async function ownerOfKey(
  deps: Pick<ServiceDeps, 'pool' | 'logger'> & { config: { readonly apiKeyCacheSeconds: number } },
  kind: 'secret' | 'publishable',
  key: string,
  param?: string,
): Promise<KeyOwner> {
  const cache = cacheOf(deps.pool);
  const digest = digestOf(kind, key);
  const now = Date.now();
  const hit = cache.get(digest);
  if (hit && hit.until > now) {
    if (now - hit.useRecordedAt >= lastUseResolutionMs) {
      hit.useRecordedAt = now;
      await recordUse(deps, hit.owner.keyId);
    }
    return hit.owner;
  }
  if (hit) cache.delete(digest);
  const generation = generations.get(deps.pool) ?? 0;
  const check = kind === 'secret' ? await checkSecretKey(deps.pool, key) : await checkPublishableKey(deps.pool, key);
  if (check?.status !== 'active') throw refusal(kind, check, param);
  if (check.lastUseDue) await recordUse(deps, check.owner.keyId);
  const lifetimeMs = deps.config.apiKeyCacheSeconds * 1000;
  // A key revoked or rolled here since the read began may be this one: answer, but do not remember.
  if (lifetimeMs > 0 && generation === (generations.get(deps.pool) ?? 0)) {
    const graceEnds = check.expiresAt ? Date.parse(check.expiresAt) : Infinity;
    cache.set(digest, { owner: check.owner, until: Math.min(now + lifetimeMs, graceEnds), useRecordedAt: now });
  }
  return check.owner;
}

/** Bookkeeping only: a failed write must not fail an authenticated request. */
function recordUse(deps: Pick<ServiceDeps, 'pool' | 'logger'>, keyId: string): Promise<void> {
  return recordKeyUse(deps.pool, keyId).catch((err) => deps.logger?.warn({ err, keyId }, 'could not record the use of an API key'));
}

function refusal(kind: 'secret' | 'publishable', check: Exclude<KeyCheck, { status: 'active' }> | null, param?: string): AppError {
  const what = kind === 'secret' ? 'API key' : 'publishable key';
  const listed = "GET /v1/keys, the dashboard's API keys page and `npx malipo keys:list` list a store's keys by their last four characters";
  if (!check) return new AppError('invalid_api_key', `The ${what} is unknown: check that it was copied whole. ${listed}.`, param);
  if (check.status === 'revoked') {
    return new AppError(
      'api_key_revoked',
      `This ${what} was revoked at ${check.revokedAt} and no longer works. Use another key of the store; ` +
        'a working secret key creates new ones (POST /v1/keys), and so do the dashboard and `npx malipo keys:create` on the server.',
      param,
    );
  }
  const successor = check.replacedBy ? `the key that replaced it (${check.replacedBy}, shown once when it was rolled)` : 'another key of the store';
  return new AppError('api_key_expired', `This ${what} was rolled and its grace period ended at ${check.expiresAt}. Use ${successor}; ${listed}.`, param);
}
