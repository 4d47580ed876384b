import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { keyringFor } from '../../services/keyring.js';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  endIdempotencyLease,
  releaseIdempotencyKey,
  renewIdempotencyClaim,
  reserveCreatedId,
  type CreatedIds,
  type KeyScope,
} from '../../db/idempotency-repo.js';
import { AppError } from '../../domain/errors.js';
import { newId, randomToken, type IdKind } from '../../domain/ids.js';
import type { ApiDeps } from '../deps.js';
import type { IdempotencyOptions } from '../route.js';
import type { AuthContext } from './auth.js';
import { freshIds, type RequestIds } from '../../services/request-ids.js';
import { isSealed, needsSealing, sealBody, unsealBody, type RecordRef } from './idempotency-seal.js';

/**
 * `Idempotency-Key` on a POST: the same key and body within 24 hours replays the first answer
 * (status and body); the same key with another body is a 409. Keys are scoped to the store and
 * environment of the API key (docs/idempotency.md).
 *
 * - A claim is a lease of IDEMPOTENCY_LEASE_SECONDS, renewed while the request runs. Meanwhile a
 *   retry gets a 409 with Retry-After; once the lease ran out (the process died) a retry takes
 *   the claim over.
 * - A request that creates an object takes its id from `ids.idFor(kind)` (payment links and
 *   invoices do): the id is reserved on the key before the object is created, so a retry after
 *   a crash at any point finds and completes the same object (its workflow id derives from the
 *   same id, and starting an existing workflow is a no-op) and answers as the first attempt
 *   would have. Nothing is created twice.
 * - A 400 (the request was refused before anything ran) does not bind the key: the corrected
 *   request may use it. Other 4xx answers are recorded and replayed. A 5xx ends the lease at
 *   once: the key is free again if nothing was reserved, and otherwise stays bound to the
 *   request so that the retry completes what was started.
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
  run: (ids: RequestIds) => Promise<unknown>,
  options?: IdempotencyOptions,
): Promise<unknown> {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (!key || request.method !== 'POST' || auth.kind !== 'secret') return run(freshIds);
  if (key.length > 255) throw new AppError('invalid_field', 'The Idempotency-Key header must be at most 255 characters.', 'Idempotency-Key');
  const path = request.url.split('?')[0]!;
  const requestHash = createHash('sha256').update(`${request.method} ${path}\n${JSON.stringify(request.body ?? null)}`).digest('hex');
  const scope = { storeId: auth.storeId, environment: auth.environment, key };
  const leaseMs = deps.config.idempotencyLeaseSeconds * 1000;
  const claim = await claimIdempotencyKey(deps.pool, { ...scope, requestHash, method: request.method, path, leaseMs, token: randomToken(24) });
  if (claim.kind === 'mismatch') {
    throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
  }
  if (claim.kind === 'in_progress') throw inProgress(claim.retryAfterMs);
  if (claim.kind === 'replay') {
    // A sealed field that no longer decrypts (tampered, key removed) is a 500, logged: never a guess.
    const body = isSealed(claim.body) ? unsealBody(await keyringFor(deps.config, auth.environment), scope, claim.body) : claim.body;
    reply.header('idempotent-replayed', 'true');
    reply.status(claim.status);
    return body;
  }
  if (claim.takenOver) request.log.warn({ idempotencyKeyStore: auth.storeId }, 'took over an Idempotency-Key whose earlier attempt stopped without an answer');
  const attempt = new Attempt(deps, request, scope, claim.token, claim.createdIds, leaseMs);
  try {
    let body: unknown;
    try {
      body = await run(attempt.ids);
    } catch (err) {
      await attempt.failed(err).catch((e: unknown) => request.log.error({ err: e }, 'could not settle the Idempotency-Key after a failed request'));
      throw err;
    }
    await attempt.succeeded(reply.statusCode, body, options?.sealedFields ?? []);
    return body;
  } finally {
    attempt.stop();
  }
}

function inProgress(retryAfterMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new AppError(
    'idempotency_request_in_progress',
    `A request with this Idempotency-Key is still being processed; retry in ${seconds} s.`,
    undefined,
    { 'retry-after': String(seconds) },
  );
}


/** One attempt holding a claim: keeps its lease, reserves ids, and settles the key at the end. */
class Attempt {
  private readonly timer: NodeJS.Timeout;
  readonly ids: RequestIds;

  constructor(
    private readonly deps: ApiDeps,
    private readonly request: FastifyRequest,
    private readonly scope: KeyScope & { environment: AuthContext['environment'] },
    private readonly token: string,
    private readonly reserved: CreatedIds,
    leaseMs: number,
  ) {
    this.timer = setInterval(() => void this.renew(leaseMs), Math.max(100, Math.floor(leaseMs / 3)));
    this.timer.unref();
    this.ids = {
      idFor: async (kind) => {
        const known = this.reserved[kind];
        if (known) return known;
        const id = await reserveCreatedId(deps.pool, scope, token, kind, newId(kind));
        if (!id) throw inProgress(1000);
        this.reserved[kind] = id;
        return id;
      },
    };
  }

  private async renew(leaseMs: number): Promise<void> {
    try {
      if (!(await renewIdempotencyClaim(this.deps.pool, this.scope, this.token, leaseMs))) {
        this.request.log.warn('this request lost its Idempotency-Key claim (it ran past the lease while stalled); a retry took it over');
        this.stop();
      }
    } catch (err) {
      this.request.log.warn({ err }, 'could not renew the Idempotency-Key lease');
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async failed(err: unknown): Promise<void> {
    const { deps, scope, token } = this;
    if (err instanceof AppError && err.status === 400) return releaseIdempotencyKey(deps.pool, scope, token);
    if (err instanceof AppError && err.status < 500) {
      const { status, type, code, message, param } = err;
      return completeIdempotencyKey(deps.pool, scope, token, status, { error: { type, code, message, ...(param ? { param } : {}), requestId: this.request.id } });
    }
    return this.letGo();
  }

  /** Records the answer. If that fails the object still exists: answer anyway; the retry completes the same one. */
  async succeeded(status: number, body: unknown, sealedFields: readonly string[]): Promise<void> {
    try {
      const stored = await storedForm(this.deps, this.request, this.scope, body, sealedFields);
      if (stored === unstorable) await this.letGo();
      else await completeIdempotencyKey(this.deps.pool, this.scope, this.token, status, stored);
    } catch (err) {
      this.request.log.error({ err }, 'could not record the answer for the Idempotency-Key; a retry after the lease completes the same request');
    }
  }

  /** Free the key if nothing was reserved, else keep it bound to the request with its lease ended. */
  private letGo(): Promise<void> {
    const { deps, scope, token } = this;
    return Object.keys(this.reserved).length === 0 ? releaseIdempotencyKey(deps.pool, scope, token) : endIdempotencyLease(deps.pool, scope, token);
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
