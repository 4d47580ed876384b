import type { FastifyReply, FastifyRequest } from 'fastify';
import { sha256Base64url } from '../../domain/crypto/sha256.js';

/**
 * For bodies that browsers poll (invoice lookup, checkout): a weak ETag of the body and
 * `no-cache`, so an unchanged poll ends in a bodiless 304. Returns the reply when it answered 304,
 * and otherwise the body already serialized (the same bytes the route's serializer would write,
 * JSON.stringify: api/openapi.ts documentOnly), so it is serialized once, for the tag and the answer.
 */
export function answerUnlessUnchanged(request: FastifyRequest, reply: FastifyReply, body: unknown): FastifyReply | string {
  const json = JSON.stringify(body);
  const etag = `W/"${sha256Base64url(json).slice(0, 27)}"`;
  reply.header('etag', etag).header('cache-control', 'no-cache');
  if (request.headers['if-none-match'] === etag) return reply.status(304).send();
  reply.header('content-type', 'application/json; charset=utf-8');
  return json;
}
