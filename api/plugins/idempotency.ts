import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyringFor } from '../../activities/crypto/keyring.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../../db/idempotency-repo.js';
import { AppError } from '../../domain/errors.js';
import type { ApiDeps } from '../deps.js';
import type { IdempotencyOptions } from '../route.js';
import type { AuthContext } from './auth.js';
import { isSealed, needsSealing, sealBody, unsealBody, type RecordRef } from './idempotency-seal.js';

/**
 * `Idempotency-Key` on a POST: the same key and body within 24 hours replays the first answer
 * (status and body); the same key with another body is a 409. Keys are scoped to the store and
 * environment of the API key. Answers of 4xx are stored too (they changed nothing and will not
 * change on retry); 5xx answers release the key.
 *
 * A route whose answer carries a secret declares it (`idempotency.sealedFields`): the record
 * keeps those fields encrypted with the ENCRYPTION_KEY keyring, and a replay decrypts them, so
 * the replay is the same response while the table never holds the secret in clear.
 */
export async function withIdempotency(
  deps: ApiDeps,
  auth: AuthContext,
  request: FastifyRequest,
  reply: FastifyReply,
  run: () => Promise<unknown>,
  options?: IdempotencyOptions,
): Promise<unknown> {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key || request.method !== 'POST' || auth.kind !== 'secret') return run();
  if (key.length > 255) throw new AppError('invalid_field', 'The Idempotency-Key header must be at most 255 characters.', 'Idempotency-Key');
  const path = request.url.split('?')[0]!;
  const requestHash = createHash('sha256').update(`${request.method} ${path}\n${JSON.stringify(request.body ?? null)}`).digest('hex');
  const scope = { storeId: auth.storeId, environment: auth.environment, key };
  const claim = await claimIdempotencyKey(deps.pool, { ...scope, requestHash, method: request.method, path });
  if (claim.kind === 'mismatch') {
    throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
  }
  if (claim.kind === 'in_progress') {
    throw new AppError('idempotency_request_in_progress', 'A request with this Idempotency-Key is still being processed; retry in a moment.');
  }
  if (claim.kind === 'replay') {
    // A sealed field that no longer decrypts (tampered, key removed) is a 500, logged: never a guess.
    const body = isSealed(claim.body) ? unsealBody(await keyringFor(deps.config, auth.environment), scope, claim.body) : claim.body;
    reply.header('idempotent-replayed', 'true');
    reply.status(claim.status);
    return body;
  }
  try {
    const body = await run();
    const stored = await storedForm(deps, request, scope, body, options?.sealedFields ?? []);
    if (stored === unstorable) await releaseIdempotencyKey(deps.pool, scope);
    else await completeIdempotencyKey(deps.pool, scope, reply.statusCode, stored);
    return body;
  } catch (err) {
    if (err instanceof AppError && err.status < 500) {
      const { status, type, code, message, param } = err;
      await completeIdempotencyKey(deps.pool, scope, status, { error: { type, code, message, ...(param ? { param } : {}), requestId: request.id } });
    } else {
      await releaseIdempotencyKey(deps.pool, scope);
    }
    throw err;
  }
}

const unstorable = Symbol('unstorable');

/** The body as it may be stored: secret fields encrypted, or nothing at all if they cannot be. */
async function storedForm(
  deps: ApiDeps,
  request: FastifyRequest,
  ref: RecordRef & { environment: AuthContext['environment'] },
  body: unknown,
  fields: readonly string[],
): Promise<unknown> {
  if (!needsSealing(body, fields)) return body;
  try {
    return sealBody(await keyringFor(deps.config, ref.environment), ref, body, fields);
  } catch (err) {
    // Never a secret in clear: without a usable key the record is dropped (a retry runs again).
    request.log.error({ err }, 'could not encrypt a secret-bearing response for the Idempotency-Key store; the key was released');
    return unstorable;
  }
}
