import { z } from 'zod/v4';
import { listSweepDestinations, type SweepDestinationDto } from '../../../services/treasury/destinations.js';
import { defineRoute } from '../../route.js';
import type { Same } from '../../schema-types.js';

const sweepDestinationSchema = z
  .object({
    id: z.string().describe('sdst_…'),
    rail: z.string(),
    address: z.string().describe("In the rail's ledger form (EVM lowercased)"),
    label: z.string(),
    createdAt: z.string(),
    usableAt: z.string().describe('When a sweep may first use it: its creation plus the configured delay (24 h by default)'),
    usable: z.boolean(),
  })
  .meta({ id: 'SweepDestination' });

export const listSweepDestinationsRoute = defineRoute({
  method: 'GET',
  url: '/v1/treasury/destinations',
  operationId: 'listSweepDestinations',
  summary: "The store's sweep destinations (read-only: only owners change them, in the dashboard)",
  tags: ['Treasury'],
  auth: 'secret',
  responses: { 200: { description: 'Destinations, oldest first', schema: z.object({ data: z.array(sweepDestinationSchema) }) } },
  handler: async ({ deps, auth }) => ({ data: await listSweepDestinations(deps, auth) }),
});

true satisfies Same<z.infer<typeof sweepDestinationSchema>, SweepDestinationDto>;
