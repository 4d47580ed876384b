import { z } from 'zod/v4';
import { broadcastSweepPlan, createSweepPlan } from '../../../services/treasury/sweeps.js';
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

export const broadcastSweepPlanRoute = defineRoute({
  method: 'POST',
  url: '/v1/sweeps/:id/broadcast',
  operationId: 'broadcastSweepPlan',
  summary: "Broadcasts a plan's signed transactions after checking each against the plan: top-ups first, each followed until mined",
  tags: ['Treasury'],
  auth: 'secret',
  params: z.object({ id: z.string().describe('swp_…') }),
  body: z.object({
    transactions: z
      .array(z.object({ raw: z.string().describe('A signed transaction, 0x…') }).loose())
      .min(1)
      .describe("In the plan's order: the signer's output file can be sent as it is"),
  }).loose(),
  responses: {
    200: {
      description: 'Every transaction sent and mined, with its outcome',
      schema: z.object({
        id: z.string(),
        transactions: z.array(z.object({ kind: z.string(), hash: z.string(), status: z.enum(['success', 'reverted']), blockNumber: z.string() })),
      }).meta({ id: 'SweepBroadcast' }),
    },
    409: { description: 'A transaction differs from the plan, the plan was broadcast already, or it expired: nothing was sent' },
  },
  handler: async ({ deps, auth, params, body }) => broadcastSweepPlan(deps, auth, params.id, body.transactions.map((t) => t.raw)),
});
