import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import { notFound } from '../../../domain/errors.js';
import { railRecord } from '../../../rails/registry.js';
import { availableRailsOf } from '../../../services/stores/stores.js';
import { isSimulatedOnly } from '../../../rails/settings.js';
import { defineRoute } from '../../route.js';
import { railRecordSchema } from './schemas.js';

export const listClientChains = defineRoute({
  method: 'GET',
  url: '/v1/chains/client/:clientId',
  operationId: 'listClientChains',
  summary: 'Rails a store accepts in the environment of the publishable key',
  tags: ['Rails'],
  auth: 'publishable',
  rateLimitPerMinute: 240,
  params: z.object({ clientId: z.string() }),
  query: z.object({ pk: z.string().describe('Publishable key, pk_test_… or pk_live_…') }),
  responses: {
    200: {
      description: 'Available rails',
      schema: z.object({
        clientId: z.string(),
        clientName: z.string(),
        environment: z.enum(environments),
        availableChains: z.array(railRecordSchema),
      }),
    },
  },
  handler: async ({ deps, auth, params }) => {
    // A publishable key of another store gets the same 404 as an unknown store.
    if (params.clientId !== auth.storeId) throw notFound('client');
    const available = await availableRailsOf(deps, auth);
    return {
      clientId: auth.storeId,
      clientName: auth.storeName,
      environment: auth.environment,
      availableChains: available.map((id) => ({
        ...railRecord(id, deps.config.publicBaseUrl),
        ...(isSimulatedOnly(deps.config.rails, id, auth.environment) ? { simulatedOnly: true as const } : {}),
      })),
    };
  },
});
