import { z } from 'zod/v4';
import { broadcastSweepPlan, createSweepPlan } from '../../../services/treasury/sweeps.js';
import { defineRoute } from '../../route.js';
import type { Same } from '../../schema-types.js';
import { getSweep, recentSweeps, type SweepDto } from '../../../services/treasury/sweep-ledger.js';

const txSchema = z.object({
  kind: z.enum(['top_up', 'transfer', 'sponsored']).describe('top_up: gas from the funding address to a source; transfer: the token from a source to the destination; sponsored: the one EIP-7702 transaction from the funding address to EntryPoint v0.8 (handleOps) that moves every source'),
  from: z.string(),
  to: z.string(),
  value: z.string().describe('Native coin, smallest unit, decimal string'),
  data: z.string().optional().describe("Absent on a sponsored transaction: the signer builds handleOps from the user operations and their signatures"),
  nonce: z.number().int(),
  gas: z.string(),
  maxFeePerGas: z.string(),
  maxPriorityFeePerGas: z.string(),
  chainId: z.number().int(),
  type: z.enum(['eip1559', 'eip7702']),
  firstSource: z.number().int().optional().describe('Sponsored: the first source (and authorization, and user operation) this transaction carries'),
  sourceCount: z.number().int().optional().describe('Sponsored: how many it carries (at most 50)'),
});

const userOpSchema = z.object({
  sender: z.string(),
  nonce: z.string().describe("EntryPoint v0.8's nonce of the sender (key 0)"),
  initCode: z.string().describe('0x7702: an EIP-7702 account (the op hash commits to its delegate)'),
  callData: z.string().describe('execute(token, 0, transfer(destination, the whole balance))'),
  accountGasLimits: z.string(),
  preVerificationGas: z.string(),
  gasFees: z.string().describe('Zero: the source pays nothing'),
  paymasterAndData: z.string(),
});

const evmPlanSchema = z.object({
  kind: z.literal('sponsored').optional().describe('Present on a sponsored plan'),
  chainId: z.number().int(),
  blockNumber: z.string().describe('Every balance, nonce and fee was read at this block'),
  token: z.string(),
  destination: z.string(),
  funding: z.string(),
  sources: z.array(z.object({ address: z.string(), path: z.string().nullable(), amountMinor: z.string() })),
  delegate: z.string().optional().describe('Sponsored: the EIP-7702 delegate (Simple7702Account)'),
  entryPoint: z.string().optional().describe('Sponsored: EntryPoint v0.8, as the delegate names it'),
  authorizations: z.array(z.object({ source: z.string(), chainId: z.number().int(), address: z.string(), nonce: z.number().int() })).optional()
    .describe('Sponsored: per source, the EIP-7702 authorization it signs'),
  userOps: z.array(userOpSchema).optional().describe('Sponsored: per source, the user operation it signs'),
  transactions: z.array(txSchema).describe('Unsigned, in broadcast order: top-ups first, then one transfer per source; a sponsored plan has one per 50 sources'),
  topUpWei: z.string(),
  maxFeeWei: z.string(),
  fundingBalanceWei: z.string(),
}).meta({ id: 'EvmSweepPlanBody' });

const tronTxSchema = z.object({
  kind: z.enum(['activate', 'delegate', 'top_up', 'transfer', 'undelegate']).describe('activate: 1 sun creating a source\'s account; delegate / undelegate: Stake 2.0 energy from the funding account; top_up: TRX to burn; transfer: the TRC-20 transfer'),
  from: z.string().describe('The owner, who signs'),
  source: z.string(),
  value: z.string().describe('Sun moved or delegated; the token (smallest unit) for a transfer'),
  visible: z.literal(true),
  txID: z.string().describe('SHA-256 of raw_data_hex: what the owner signs'),
  raw_data: z.record(z.string(), z.unknown()),
  raw_data_hex: z.string(),
});

const tronPlanSchema = z.object({
  network: z.literal('tron'),
  kind: z.enum(['energy_delegation', 'trx_top_ups']).describe('energy_delegation: staked energy lent to each source and taken back; trx_top_ups: TRX sent to burn for energy'),
  blockNumber: z.string().describe('The head block every transaction references'),
  token: z.string(),
  destination: z.string(),
  funding: z.string(),
  expiresAtMs: z.number().int().describe('Every transaction expires then (raw_data.expiration)'),
  sources: z.array(z.object({ address: z.string(), path: z.string().nullable(), amountMinor: z.string(), accountExists: z.boolean(), bandwidth: z.string(), trxSun: z.string() })),
  transactions: z.array(tronTxSchema).describe('Unsigned, in broadcast order: activations, top-ups or delegations, the transfers, then undelegations'),
  energyPerTransfer: z.string(),
  fees: z.object({ energySun: z.string(), bandwidthSun: z.string(), newAccountSun: z.string() }),
  delegatableSun: z.string(),
  delegatedSun: z.string(),
  trxBurnedSun: z.string().describe('The most the plan burns in TRX (sun), either kind'),
  topUpWei: z.string().describe('TRX (sun) the funding account sends to the sources'),
  maxFeeWei: z.string(),
  fundingBalanceWei: z.string(),
}).meta({ id: 'TronSweepPlanBody' });

const planSchema = z
  .object({
    id: z.string().describe('swp_…'),
    rail: z.string(),
    kind: z.enum(['top_up', 'sponsored', 'energy_delegation']).describe("top_up: gas (or TRX) sent to each source; sponsored: EIP-7702; energy_delegation: TRON, the funding account's staked energy lent to each source"),
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
      usd: z.string().nullable().describe('maxFee in USD at usdPrice, decimal string, 6 decimals, rounded up; null when no price (usdOmitted says why)'),
      usdPrice: z.string().nullable().describe('USD per native coin the cost was priced at (docs/rates.md, "Native coin prices")'),
      usdOmitted: z.string().nullable().describe('Why usd is null'),
    }),
    plan: z.union([evmPlanSchema, tronPlanSchema]),
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
    rail: z.string().describe('An EVM rail (e.g. USDT_BSC) or USDT_TRON'),
    destination: z.string().describe("On the store's sweep destinations, past its delay"),
    fundingAddress: z.string().describe('Pays the gas top-ups (or the sponsored transaction); you sign its transactions'),
    kind: z.enum(['top_up', 'sponsored']).optional()
      .describe('top_up (the default): gas top-ups, then one transfer per source; sponsored: EIP-7702, one transaction from the funding address moves everything, no top-ups'),
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
  summary: "Broadcasts a plan's signed transactions after checking each against the plan: top-ups (TRON: and energy delegations) first, each followed until mined",
  tags: ['Treasury'],
  auth: 'secret',
  params: z.object({ id: z.string().describe('swp_…') }),
  // A sponsored transaction carries 50 authorizations and user operations (about 80 KB of hex);
  // a top-up plan one transaction per source: thousands of sources fit in 8 MB.
  bodyLimitBytes: 8 * 1024 * 1024,
  body: z.object({
    transactions: z
      .array(z.object({ raw: z.string().describe("A signed transaction: EVM, 0x…; TRON, the signer's JSON of it with its signature") }).loose())
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

const sweepState = z.enum(['broadcast', 'mined', 'final', 'partially_completed', 'failed']);
const sweepTxState = z.enum(['broadcast', 'mined', 'final', 'failed', 'dropped']);
const sweepSchema = z
  .object({
    id: z.string().describe('swp_…'),
    rail: z.string(),
    kind: z.enum(['top_up', 'sponsored', 'energy_delegation']).describe("top_up: gas (or TRX) sent to each source; sponsored: EIP-7702; energy_delegation: TRON, the funding account's staked energy lent to each source"),
    destination: z.string(),
    state: sweepState.nullable().describe(
      "null: planned, never broadcast; broadcast (a transaction in no block yet); mined (every one in a block); final (every transfer at the rail's confirmation depth); "
      + 'partially_completed (the broadcast stopped or a transaction failed, after some transfers went through); failed (none did)',
    ),
    totalToken: z.string().describe('Token the plan moves, decimal string'),
    movedToken: z.string().describe('Token the final transfers moved, decimal string'),
    tokenSymbol: z.string(),
    createdAt: z.string(),
    broadcastAt: z.string().nullable(),
    finishedAt: z.string().nullable().describe('When it became final, partially_completed or failed'),
    transactions: z.array(z.object({
      kind: z.enum(['top_up', 'transfer', 'delegate', 'undelegate']).describe('delegate / undelegate: TRON, staked energy lent to the source and taken back (no money moves)'),
      source: z.string().describe("The swept address: a top-up's recipient, a transfer's sender, the receiver of lent energy"),
      from: z.string(),
      to: z.string().describe("A transfer's: the destination"),
      amount: z.string().describe('Decimal string: the token for a transfer, the native coin for a top-up, the staked native coin lent for a (un)delegation'),
      hash: z.string(),
      state: sweepTxState.describe('broadcast (in no block: pending, or taken out by a reorganisation); mined; final; failed (reverted); dropped (its nonce taken by another transaction)'),
      blockNumber: z.string().nullable(),
    })).describe('Each transaction sent, in the plan\'s order'),
  })
  .meta({ id: 'Sweep' });

export const getSweepRoute = defineRoute({
  method: 'GET',
  url: '/v1/sweeps/:id',
  operationId: 'getSweep',
  summary: 'A sweep as the ledger knows it: its state and each transaction\'s (broadcast, mined, final at the rail\'s depth, failed)',
  tags: ['Treasury'],
  auth: 'secret',
  params: z.object({ id: z.string().describe('swp_…') }),
  responses: { 200: { description: 'The sweep', schema: sweepSchema } },
  handler: async ({ deps, auth, params }) => getSweep(deps, auth, params.id),
});

export const listSweepsRoute = defineRoute({
  method: 'GET',
  url: '/v1/sweeps',
  operationId: 'listSweeps',
  summary: "The store's broadcast sweeps, newest first",
  tags: ['Treasury'],
  auth: 'secret',
  query: z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(20).describe('1..100, default 20') }),
  responses: { 200: { description: 'Broadcast sweeps, newest first', schema: z.object({ data: z.array(sweepSchema) }) } },
  handler: async ({ deps, auth, query }) => ({ data: await recentSweeps(deps, auth, query.limit) }),
});

true satisfies Same<z.infer<typeof sweepSchema>, SweepDto>;
