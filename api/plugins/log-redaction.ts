import type { LoggerOptions } from 'pino';

/** Secrets never reach the log: headers that carry them are censored wherever they appear. */
export const loggerRedactPaths = ['req.headers["x-api-key"]', 'req.headers.authorization', 'headers["x-api-key"]'];

/**
 * Paths whose last segment is a bearer secret: the M-Pesa callback URL carries the per-prompt
 * token that authenticates a callback, and a dashboard invitation link the token that lets its
 * holder join a store. Anyone who reads the log must not be able to forge one or join.
 */
const secretPathSegments = [/^(\/v1\/callbacks\/mpesa\/)[^/?#]+/, /^(\/v1\/callbacks\/c2b\/)[^/?#]+/, /^(\/dashboard\/invitations\/)[^/?#]+/];

/** The URL as it may be logged: secret path segments and the query string's values censored. */
export function redactUrl(url: string): string {
  const [path = '', query] = url.split('?', 2);
  let safe = path;
  for (const pattern of secretPathSegments) safe = safe.replace(pattern, '$1[redacted]');
  return query === undefined ? safe : `${safe}?${query.replace(/=[^&]*/g, '=[redacted]')}`;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** Fastify's own request serializer, with the URL redacted. */
function requestSerializer(req: LoggedRequest) {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** Options for every pino logger the service makes (API, worker, CLI). */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: { paths: loggerRedactPaths, censor: '[redacted]' }, serializers: { req: requestSerializer } };
}
