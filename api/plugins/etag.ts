import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * For bodies that browsers poll (invoice lookup, checkout): a weak ETag of the body and
 * `no-cache`, so an unchanged poll ends in a bodiless 304. Returns the reply when it answered 304.
 */
export function answerUnlessUnchanged(request: FastifyRequest, reply: FastifyReply, body: unknown): FastifyReply | unknown {
  const etag = `W/"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
  reply.header('etag', etag).header('cache-control', 'no-cache');
  if (request.headers['if-none-match'] === etag) return reply.status(304).send();
  return body;
}
