import type { FastifyRequest } from 'fastify';
import { parseKeyShape } from '../../domain/api-keys.js';
import type { Environment } from '../../domain/environment.js';
import { AppError } from '../../domain/errors.js';
import { ownerOfKey, rememberedOwnerOfKey } from '../../services/keys/key-owners.js';
import type { ApiDeps } from '../deps.js';

export type AuthKind = 'secret' | 'publishable' | 'none';

export interface AuthContext {
  kind: AuthKind;
  storeId: string;
  storeName: string;
  environment: Environment;
  keyId: string;
}

export const anonymous: AuthContext = { kind: 'none', storeId: '', storeName: '', environment: 'test', keyId: '' };

/**
 * Resolves the credential a route asks for. Secret keys come in `x-api-key`; publishable keys in
 * the `pk` query parameter. The environment is read from the key, never from the request body.
 * Messages never echo the key. A key this process remembers (services/keys/key-owners.ts) is
 * answered at once, without a promise; otherwise the answer is a promise. Refusals are thrown.
 */
export function authenticate(deps: ApiDeps, request: FastifyRequest, kind: AuthKind): AuthContext | Promise<AuthContext> {
  if (kind === 'none') return anonymous;
  if (kind === 'secret') {
    const header = request.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    if (!key) throw new AppError('missing_api_key', 'Send your secret API key in the x-api-key header.');
    const shape = parseKeyShape(deps.config.keyPrefix, key);
    if (shape?.kind === 'publishable') {
      throw new AppError('wrong_key_kind', 'This endpoint needs a secret key; a publishable key (pk_…) was sent.');
    }
    if (!shape) {
      throw new AppError('invalid_api_key', `The API key is not valid. Secret keys start with ${deps.config.keyPrefix}_test_ or ${deps.config.keyPrefix}_live_.`);
    }
    // A key this process remembers is answered at once (the hot path: no promise, no statement).
    const remembered = rememberedOwnerOfKey(deps.pool, 'secret', key);
    if (remembered) return { kind, ...remembered };
    return ownerOfKey(deps, 'secret', key).then((owner) => ({ kind, ...owner }));
  }
  const pk = (request.query as Record<string, unknown> | undefined)?.pk;
  if (typeof pk !== 'string' || pk === '') {
    throw new AppError('missing_api_key', "Send the store's publishable key in the pk query parameter.", 'pk');
  }
  const shape = parseKeyShape(deps.config.keyPrefix, pk);
  if (shape?.kind === 'secret') {
    throw new AppError('wrong_key_kind', exposedSecretKeyMessage, 'pk');
  }
  if (!shape) throw new AppError('invalid_api_key', 'The publishable key is not valid; it starts with pk_test_ or pk_live_.', 'pk');
  const remembered = rememberedOwnerOfKey(deps.pool, 'publishable', pk);
  if (remembered) return { kind, ...remembered };
  return ownerOfKey(deps, 'publishable', pk, 'pk').then((owner) => ({ kind, ...owner }));
}

/** A secret key sent in a public place is compromised: the answer says how to replace it. */
const exposedSecretKeyMessage =
  'A secret key was sent where a publishable key (pk_…) belongs, so treat it as exposed: roll it now with a short grace period ' +
  '(POST /v1/keys/{id}/roll {"graceHours": 0.5}; GET /v1/keys shows its id by its last four characters) or revoke it ' +
  '(POST /v1/keys/{id}/revoke), from another key, the dashboard\'s API keys page or `npx malipo keys:roll` on the server.';

