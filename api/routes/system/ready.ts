import { z } from 'zod/v4';
import { environments } from '../../../domain/environment.js';
import { usdtRails } from '../../../rails/registry.js';
import { readiness } from '../../../services/system/readiness.js';
import { defineRoute } from '../../route.js';

const chainIdStatus = z.object({
  rail: z.enum(usdtRails),
  environment: z.enum(environments),
  expected: z.number().int().describe('The chain id configured for the rail (CHAIN_ID_<RAIL>_<ENV>, by default the public network\'s)'),
  rpcs: z.array(z.object({
    rpc: z.number().int().describe('The RPC\'s position in RPC_URL_<RAIL>_<ENV>, from 1; URLs are never shown'),
    actual: z.number().int().nullable().describe('What it answered to eth_chainId; null until it answers'),
    verdict: z.enum(['verified', 'wrong_chain', 'unanswered']).describe('wrong_chain: not used; unanswered: used meanwhile, asked again'),
  })),
  usable: z.number().int().describe('How many of the rail\'s RPCs may be used'),
});

const providerStatus = z.object({
  index: z.number().int().describe('The RPC\'s position in RPC_URL_<RAIL>_<ENV>, from 1; URLs and hosts are never shown'),
  state: z.enum(['ok', 'lagging', 'erroring', 'disagreeing']).describe('How the chain watcher last found it'),
  reason: z.string().nullable().describe('Why it was last reported; null while ok'),
  sidelinedUntil: z.string().nullable().describe('Until when it is asked last (ISO time); null when not sidelined'),
  strikes: z.number().int().describe('Reports in a row; the sideline doubles with each'),
});

const watcherStatus = z.object({
  headBlock: z.number().int().nullable().describe('The head this process last read (a slot on Solana); null before its first read'),
  readToBlock: z.number().int().nullable().describe('The last block read completely; null before the first read'),
  lagBlocks: z.number().int().nullable().describe('Blocks between the two'),
  lastReadSecondsAgo: z.number().int().nullable().describe('Since the chain was last read, by this process or another worker (the saved cursor); null before any read'),
  failing: z.enum(['unreachable', 'failed']).nullable().describe('Why this process\'s latest tick failed: its node could not be reached, or anything else; null when it succeeded'),
  bounds: z.object({
    staleSeconds: z.number().int().describe('Longest time without a read (READY_CHAIN_STALE_SECONDS; by default ten poll intervals, at least 60 s)'),
    lagBlocks: z.number().int().describe('Most blocks behind the head (READY_CHAIN_LAG_BLOCKS; by default per chain)'),
  }),
});

const checkNames = [
  '`database`: PostgreSQL answers',
  '`migrations`: every migration this code ships is applied',
  '`temporal`: the Temporal frontend answers',
  '`redis` (when REDIS_URL is set): Redis answers PING',
  '`chain-id:<RAIL>:<env>` for each EVM rail and environment with a token contract',
  '`providers:<RAIL>:<env>` and `watcher:<RAIL>:<env>` for each rail whose chain watcher runs in this process',
].join('; ');

const readinessSchema = z.object({
  ready: z.boolean(),
  checks: z.array(z.object({
    name: z.string().describe(`What is checked: ${checkNames}`).meta({ example: 'chain-id:USDT_BSC:test' }),
    ok: z.boolean(),
    detail: z.string().describe('What was found, in a sentence or two; never a URL, host or credential'),
    chainId: chainIdStatus.optional().describe('chain-id checks: what each RPC answered at start'),
    providers: z.array(providerStatus).optional().describe('providers checks: each RPC as the chain watcher last found it (ok when at least one is ok)'),
    watcher: watcherStatus.optional().describe('watcher checks: where the watcher stands, and its bounds (ok when within both)'),
  }).meta({ id: 'ReadinessCheck' })).describe('Every check; the process is ready when all are ok'),
}).meta({ id: 'Readiness' });

export const ready = defineRoute({
  method: 'GET',
  url: '/ready',
  operationId: 'ready',
  summary: 'Readiness: PostgreSQL, its migrations, Temporal and Redis answer, every EVM rail has an RPC on its configured chain, and this process\'s chain watchers keep up',
  tags: ['System'],
  auth: 'none',
  // A probe answers whatever state Redis is in (api/plugins/rate-limit.ts, localLimitHookOf).
  localRateLimit: true,
  responses: {
    200: { description: 'Ready', schema: readinessSchema },
    503: { description: 'Not ready: the checks that failed say why. Every check runs at once under a deadline of 1.5 s, so the answer comes within about that even when a dependency hangs', schema: readinessSchema },
  },
  // Asks PostgreSQL, Temporal and Redis; reads what the start-up checks and watchers recorded: no chain request per probe.
  handler: async ({ deps, reply }) => {
    const answer = await readiness({ ...deps, redis: deps.rateLimitStore.redis });
    reply.status(answer.ready ? 200 : 503);
    return answer;
  },
});
