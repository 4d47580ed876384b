import { pingDatabase } from '../../../db/pool.js';
import { z } from 'zod/v4';
import { defineRoute } from '../../route.js';

export const health = defineRoute({
  method: 'GET',
  url: '/health',
  operationId: 'health',
  summary: 'Liveness and database reachability',
  tags: ['System'],
  auth: 'none',
  // A probe answers whatever state Redis is in (api/plugins/rate-limit.ts, localLimitHookOf).
  localRateLimit: true,
  responses: { 200: { description: 'Healthy', schema: z.object({ ok: z.boolean(), database: z.boolean() }) } },
  handler: async ({ deps }) => {
    await pingDatabase(deps.pool);
    return { ok: true, database: true };
  },
});
