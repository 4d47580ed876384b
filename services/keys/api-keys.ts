import type { DatabasePool } from 'slonik';
import {
  countUnrolledActiveKeys, findKey, insertKey, listKeys, lockStore, markRevoked, markRolled, type KeyRow, type KeyScope,
} from '../../db/api-key-repo.js';
import { defaultRollGraceHours, generateKey, maxActiveKeysPerKind, type KeyKind } from '../../domain/api-keys.js';
import { AppError, notFound } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import { forgetKeys } from './key-owners.js';
import { apiKeyDto, type ApiKeyDto } from './dto.js';

/**
 * Key management, one implementation for the API routes, the dashboard's API keys page and the
 * `keys:*` CLI commands. Everything acts on one store and environment (the scope); a key of
 * another store or environment, or a malformed id, is "No such API key" (404).
 */
export interface KeyServiceDeps {
  pool: DatabasePool;
  config: { keyPrefix: string };
}

export type CreatedApiKey = ApiKeyDto & { key: string };
export type RolledApiKey = CreatedApiKey & { previousKey: ApiKeyDto };

export async function listApiKeys(deps: KeyServiceDeps, scope: KeyScope): Promise<{ data: ApiKeyDto[] }> {
  const rows = await listKeys(deps.pool, scope);
  return { data: rows.map((r) => apiKeyDto(r, deps.config.keyPrefix)) };
}

/** A new key, working at once. The whole key is in the answer and nowhere else. */
export async function createApiKey(deps: KeyServiceDeps, scope: KeyScope, input: { kind?: KeyKind; name?: string }): Promise<CreatedApiKey> {
  const kind = input.kind ?? 'secret';
  const key = generateKey(kind, deps.config.keyPrefix, scope.environment);
  const row = await deps.pool.transaction(async (tx) => {
    // One key change per store at a time, so two creates cannot both pass the cap.
    if (!(await lockStore(tx, scope.storeId))) throw notFound('store');
    if ((await countUnrolledActiveKeys(tx, scope, kind)) >= maxActiveKeysPerKind) {
      throw new AppError(
        'invalid_state',
        `A store can have at most ${maxActiveKeysPerKind} working ${kind} keys per environment; revoke one it no longer uses (POST /v1/keys/{id}/revoke) first.`,
      );
    }
    return insertKey(tx, { ...scope, kind, key, name: input.name ?? null });
  });
  return { ...apiKeyDto(row, deps.config.keyPrefix), key };
}

/**
 * Issues a key of the same kind and name in place of `id`. The old key keeps working for
 * `graceHours` (time to deploy the new one; 0 stops it now) and then is refused. A key can be
 * rolled once: after that, roll its replacement.
 */
export async function rollApiKey(deps: KeyServiceDeps, scope: KeyScope, id: string, graceHours = defaultRollGraceHours): Promise<RolledApiKey> {
  const result = await deps.pool.transaction(async (tx) => {
    const old = await ownedKey(tx, scope, id, true);
    if (old.state === 'revoked') throw revokedConflict(old, 'rolled');
    if (old.replaced_by) {
      const ended = old.state === 'expired' ? `stopped working at ${old.expires_at}` : `keeps working until ${old.expires_at}`;
      throw new AppError(
        'invalid_state',
        `This key was already rolled: ${old.replaced_by} replaced it, and it ${ended}. Roll ${old.replaced_by} instead, or revoke this key to end its grace period now.`,
      );
    }
    const key = generateKey(old.kind, deps.config.keyPrefix, scope.environment);
    const created = await insertKey(tx, { ...scope, kind: old.kind, key, name: old.name });
    const previous = await markRolled(tx, old.id, created.id, graceHours * 3600);
    return { created, previous, key };
  });
  forgetKeys(deps.pool);
  const prefix = deps.config.keyPrefix;
  return { ...apiKeyDto(result.created, prefix), key: result.key, previousKey: apiKeyDto(result.previous, prefix) };
}

/**
 * Revokes a key now: every request with it is refused from the next one on by this process, and
 * within API_KEY_CACHE_SECONDS (5 s by default) by every other. Revoking the key that makes the request locks that
 * caller out, so it takes `confirmSelfRevoke: true`.
 */
export async function revokeApiKey(
  deps: KeyServiceDeps,
  scope: KeyScope,
  id: string,
  opts: { callingKeyId?: string; confirmSelfRevoke?: boolean } = {},
): Promise<ApiKeyDto> {
  const row = await deps.pool.transaction(async (tx) => {
    const key = await ownedKey(tx, scope, id, true);
    if (key.state === 'revoked') throw revokedConflict(key, 'revoked again');
    if (key.id === opts.callingKeyId && opts.confirmSelfRevoke !== true) {
      throw new AppError(
        'confirmation_required',
        'This is the key making this request: revoking it stops it at once, for this caller too. ' +
          'To go ahead, send {"confirmSelfRevoke": true}; to replace it without an outage, roll it instead (POST /v1/keys/{id}/roll).',
        'confirmSelfRevoke',
      );
    }
    return markRevoked(tx, key.id);
  });
  forgetKeys(deps.pool);
  return apiKeyDto(row, deps.config.keyPrefix);
}

async function ownedKey(db: Parameters<typeof findKey>[0], scope: KeyScope, id: string, forUpdate: boolean): Promise<KeyRow> {
  const row = isId('apiKey', id) ? await findKey(db, scope, id, { forUpdate }) : null;
  if (!row) throw notFound('API key');
  return row;
}

const revokedConflict = (key: KeyRow, action: string): AppError =>
  new AppError('invalid_state', `This key was revoked at ${key.revoked_at} and cannot be ${action}. Create a new key with POST /v1/keys.`);
