import { checkPublishableKey, checkSecretKey, recordKeyUse, type KeyCheck, type KeyOwner } from '../../db/api-key-repo.js';
import { AppError } from '../../domain/errors.js';
import type { ServiceDeps } from '../deps.js';

export type { KeyOwner };

/**
 * The owner of a key that still authenticates, or the 401 that says why not: unknown, revoked,
 * or rolled and past its grace period. Telling these apart helps only whoever holds the key.
 * The dashboard's sign-in goes through here too (with its own `param`).
 */
export async function ownerOfKey(deps: Pick<ServiceDeps, 'pool' | 'logger'>, kind: 'secret' | 'publishable', key: string, param?: string): Promise<KeyOwner> {
  const check = kind === 'secret' ? await checkSecretKey(deps.pool, key) : await checkPublishableKey(deps.pool, key);
  if (check?.status !== 'active') throw refusal(kind, check, param);
  if (check.lastUseDue) {
    // Bookkeeping only: a failed write must not fail an authenticated request.
    await recordKeyUse(deps.pool, check.owner.keyId).catch((err) => deps.logger?.warn({ err, keyId: check.owner.keyId }, 'could not record the use of an API key'));
  }
  return check.owner;
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
