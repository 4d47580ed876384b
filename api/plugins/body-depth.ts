import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { jsonDepthExceeds, jsonDepthRule, maxJsonDepth } from '../../domain/json-depth.js';

/**
 * A JSON body whose fields nest deeper than `maxJsonDepth` is refused before anything reads it,
 * with a 400 naming the field: the Idempotency-Key hash, zod, handlers and the dashboard's forms
 * all come later. Parsing itself is safe at any depth (V8's JSON.parse and secure-json-parse's
 * prototype scan use no recursion, and the 64 KB body limit bounds the work); what is not safe
 * is what follows, since JSON.stringify and most walkers of a value recurse, and 6,000 levels in
 * 12 KB overflow the stack. No field of any route needs more than 20 levels.
 */
export function registerBodyDepthGuard(app: FastifyInstance): void {
  // A callback hook: a request without a body (every GET) passes without a promise.
  app.addHook('preValidation', (request, _reply, done) => {
    const body = request.body;
    if (body === undefined || body === null || typeof body !== 'object') return done();
    const problem = bodyDepthProblem(body) ?? bodyTextProblem(body);
    done(problem ?? undefined);
  });
}

/** A NUL, or half of a UTF-16 surrogate pair without its other half. */
const unstorableText = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text PostgreSQL cannot store is refused on arrival, naming the field: a NUL (no `text` or
 * `jsonb` value may hold one) or an unpaired surrogate (`jsonb` refuses its escape, and as `text`
 * it would silently become U+FFFD). Keys count as text too. Runs after the depth check, so the
 * walk is bounded; found by the hostile-input suite (a NUL in `merchantRef` answered 500).
 */
export function bodyTextProblem(body: unknown): AppError | null {
  const refuse = (field: string) => new AppError('invalid_field', `Invalid '${field}': must not contain NUL characters or unpaired UTF-16 surrogates.`, field);
  if (body instanceof URLSearchParams) {
    for (const [field, value] of body) if (unstorableText.test(field) || unstorableText.test(value)) return refuse(field);
    return null;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  for (const [field, value] of Object.entries(body)) {
    if (unstorableText.test(field)) return refuse(field);
    const pending: unknown[] = [value];
    while (pending.length > 0) {
      const node = pending.pop();
      if (typeof node === 'string') {
        if (unstorableText.test(node)) return refuse(field);
      } else if (node !== null && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (unstorableText.test(k)) return refuse(field);
          pending.push(v);
        }
      }
    }
  }
  return null;
}

/** The refusal for a body nested too deep, or null. Only parsed JSON (objects and arrays) is looked at. */
export function bodyDepthProblem(body: unknown): AppError | null {
  if (body === null || typeof body !== 'object' || body instanceof URLSearchParams) return null;
  if (Array.isArray(body)) {
    // Not a body any route takes, but it must still be refused before anything walks it.
    return jsonDepthExceeds(body, maxJsonDepth + 1) ? new AppError('invalid_json', `The request body ${jsonDepthRule(maxJsonDepth + 1)}.`) : null;
  }
  for (const [field, value] of Object.entries(body)) {
    if (jsonDepthExceeds(value, maxJsonDepth)) return new AppError('invalid_field', `Invalid '${field}': ${jsonDepthRule(maxJsonDepth)}.`, field);
  }
  return null;
}
