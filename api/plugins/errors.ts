import type { FastifyError, FastifyInstance } from 'fastify';
import { isDatabaseUnavailable } from '../../db/pool.js';
import { AppError, errorTypeForStatus } from '../../domain/errors.js';

export interface ErrorBody {
  error: { type: string; code: string; message: string; param?: string; requestId: string };
}

/**
 * The one place an error becomes a response body. Unknown errors become a 500 with a fixed
 * message and the request id; the details go to the log only.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    let status: number;
    let code: string;
    let message: string;
    let param: string | undefined;
    if (err instanceof AppError) {
      ({ status, code, message, param } = err);
      if (err.headers) reply.headers(err.headers);
      if (status >= 500) request.log.warn({ err }, 'upstream or internal error');
    } else if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      [status, code, message] = [415, 'invalid_content_type', 'Send the body as application/json.'];
    } else if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      [status, code, message] = [413, 'body_too_large', 'The request body is too large.'];
    } else if (err.statusCode === 400 || err.code?.startsWith('FST_ERR_CTP')) {
      [status, code, message] = [400, 'invalid_json', 'The request body is not valid JSON.'];
    } else if (isDatabaseUnavailable(err)) {
      // PostgreSQL down or restarting: the client should retry, not give up (writes are
      // transactions, and a creation retried with its Idempotency-Key finishes the same object).
      request.log.warn({ err }, 'database unavailable');
      reply.header('retry-after', '5');
      [status, code, message] = [503, 'upstream_unavailable', 'The database is unavailable for a moment. Retry shortly (a creation with the same Idempotency-Key).'];
    } else {
      request.log.error({ err }, 'unhandled error');
      [status, code, message] = [500, 'internal', 'Something went wrong on our side. Quote the request id when you contact support.'];
    }
    const body: ErrorBody = {
      error: { type: errorTypeForStatus(status === 413 || status === 415 ? 400 : status), code, message, requestId: request.id },
    };
    if (param) body.error.param = param;
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const body: ErrorBody = {
      error: { type: 'not_found_error', code: 'not_found', message: `No route ${request.method} ${request.url.split('?')[0]}.`, requestId: request.id },
    };
    return reply.status(404).send(body);
  });
}
