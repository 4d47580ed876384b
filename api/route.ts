import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod/v4';
import { AppError } from '../domain/errors.js';
import type { AuthContext, AuthKind } from './plugins/auth.js';
import type { RequestIds } from '../services/request-ids.js';
import type { ApiDeps } from './deps.js';

/**
 * One API operation: its schemas (which feed validation and the OpenAPI document), its
 * credential and its handler. Each lives in `api/routes/<resource>/<operation>.ts`.
 */
export interface RouteDef<B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, P extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  operationId: string;
  summary: string;
  tags: string[];
  auth: AuthKind;
  /** Requests per 60-second window per client IP; unset means the default API limit. */
  rateLimitPerMinute?: number;
  /** Count the limit in this process's memory even where REDIS_URL shares the others: the probes, which must answer while Redis is away. */
  localRateLimit?: boolean;
  /** How an `Idempotency-Key` record of this route is stored (api/plugins/idempotency.ts). */
  idempotency?: IdempotencyOptions;
  body?: B;
  /** The most a body may hold, in bytes, where a route takes more than the app's 64 KB (signed sweep transactions). */
  bodyLimitBytes?: number;
  /** The body may be left out altogether (every field optional): a missing body reads as `{}`. */
  bodyOptional?: boolean;
  query?: Q;
  params?: P;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  handler: (ctx: HandlerContext<z.infer<B>, z.infer<Q>, z.infer<P>>) => Promise<unknown>;
}

export interface IdempotencyOptions {
  /**
   * Top-level response fields that carry a secret (a webhook signing secret): the stored record
   * keeps them encrypted with the ENCRYPTION_KEY keyring, and a replay decrypts them to answer
   * with the same response. Nothing else is encrypted, and nothing secret is stored in clear.
   */
  sealedFields: readonly string[];
}

export interface HandlerContext<B, Q, P> {
  deps: ApiDeps;
  auth: AuthContext;
  body: B;
  query: Q;
  params: P;
  request: FastifyRequest;
  reply: FastifyReply;
  /** Ids for the objects the request creates, kept across retries of one Idempotency-Key. */
  ids: RequestIds;
}

export function defineRoute<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(
  def: RouteDef<B, Q, P>,
): RouteDef<B, Q, P> {
  return def;
}

/** Parses a request part; the first problem becomes a 400 naming the field and what is expected. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, where: 'body' | 'query'): z.infer<T> {
  if (where === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
    throw new AppError('invalid_json', 'The request body must be a JSON object.');
  }
  const result = schema.safeParse(value ?? {}, { reportInput: true });
  if (result.success) return result.data;
  throw issueToError(result.error.issues[0]!);
}

function issueToError(issue: z.core.$ZodIssue): AppError {
  const param = issue.path.map(String).join('.') || undefined;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const full = param ? `${param}.${key}` : key;
    return new AppError('unknown_field', `Unknown field '${full}'.`, full);
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return new AppError('missing_field', `Missing required field '${param}'.`, param);
  }
  return new AppError('invalid_field', param ? `Invalid '${param}': ${issue.message}` : issue.message, param);
}
