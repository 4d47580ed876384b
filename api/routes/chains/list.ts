import { z } from 'zod/v4';
import { railIds } from '../../../domain/rails.js';
import { railRecord } from '../../../rails/registry.js';
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
  handler: async ({ deps }) => ({ chains: railIds.map((id) => railRecord(id, deps.config.publicBaseUrl)) }),
});
