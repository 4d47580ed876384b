import { z } from 'zod/v4';
import { allRails, railRecord } from '../../../rails/registry.js';
import { defineRoute } from '../../route.js';
import { railRecordSchema } from './schemas.js';

export const listChains = defineRoute({
  method: 'GET',
  url: '/v1/chains',
  operationId: 'listChains',
  summary: 'Metadata of every supported rail',
  tags: ['Rails'],
  auth: 'none',
  rateLimitPerMinute: 120,
  responses: { 200: { description: 'All six rails', schema: z.object({ chains: z.array(railRecordSchema) }) } },
  handler: async ({ deps, reply }) => {
    // The same bytes for every request of a process: serialized once, sent as they are.
    reply.header('content-type', 'application/json; charset=utf-8');
    return chainsBody(deps.config.publicBaseUrl);
  },
});

const bodies = new Map<string, Buffer>();

/** The list's JSON for one public base URL (the logos' URLs depend on it), built on first use. */
function chainsBody(publicBaseUrl: string): Buffer {
  let body = bodies.get(publicBaseUrl);
  if (!body) bodies.set(publicBaseUrl, (body = Buffer.from(JSON.stringify({ chains: allRails().map((id) => railRecord(id, publicBaseUrl)) }))));
  return body;
}
