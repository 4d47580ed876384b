import { z } from 'zod/v4';
import { createSweepPlan } from '../../../services/treasury/sweeps.js';
import { defineRoute } from '../../route.js';

const txSchema = z.object({
  kind: z.enum(['top_up', 'transfer']).describe('top_up: gas from the funding address to a source; transfer: the token from a source to the destination'),
  from: z.string(),
  to: z.string(),
  value: z.string().describe('Native coin, smallest unit, decimal string'),
  data: z.string(),
  nonce: z.number().int(),
  gas: z.string(),
  maxFeePerGas: z.string(),
  maxPriorityFeePerGas: z.string(),
  chainId: z.number().int(),
  type: z.literal('eip1559'),
});

const planSchema = z
  .object({
    id: z.string().describe('swp_…'),
    rail: z.string(),
    destination: z.string(),
    fundingAddress: z.string(),
    createdAt: z.string(),
    expiresAt: z.string().describe('Sign and broadcast before this; then plan again'),
    totalToken: z.string().describe('Token moved, decimal string'),
    tokenSymbol: z.string(),
    cost: z.object({
      nativeCoin: z.string().nullable(),
      maxFee: z.string().describe('The most the fees of every transaction can burn, in the native coin'),
      topUps: z.string().describe('Gas the funding address sends to the sources, in the native coin'),
      usd: z.string().nullable(),
      usdOmitted: z.string().nullable().describe('Why usd is null'),
    }),
    plan: z.object({
      chainId: z.number().int(),
      blockNumber: z.string().describe('Every balance, nonce and fee was read at this block'),
      token: z.string(),
      destination: z.string(),
      funding: z.string(),
      sources: z.array(z.object({ address: z.string(), path: z.string().nullable(), amountMinor: z.string() })),
      transactions: z.array(txSchema).describe('Unsigned, in broadcast order: top-ups first, then one transfer per source'),
      topUpWei: z.string(),
      maxFeeWei: z.string(),
      fundingBalanceWei: z.string(),
    }),
  })
  .meta({ id: 'SweepPlan' });

export const createSweepPlanRoute = defineRoute({
  method: 'POST',
  url: '/v1/sweeps',
  operationId: 'createSweepPlan',
  summary: "An unsigned plan moving every token on the store's handed-out addresses of a rail to an allowlisted destination",
  tags: ['Treasury'],
  auth: 'secret',
  body: z.strictObject({
    rail: z.string().describe('An EVM rail, e.g. USDT_BSC'),
    destination: z.string().describe("On the store's sweep destinations, past its delay"),
    fundingAddress: z.string().describe('Pays the gas top-ups; you sign its transactions'),
  }),
  responses: {
    201: { description: 'The plan, stored until expiresAt', schema: planSchema },
    409: { description: 'Nothing to sweep, the destination is not usable yet, or the funding address is short' },
    502: { description: 'The chain could not be read; nothing was planned' },
  },
  handler: async ({ deps, auth, body, reply }) => {
    const plan = await createSweepPlan(deps, auth, body);
    reply.status(201);
    return plan as unknown as z.infer<typeof planSchema>;
  },
});
