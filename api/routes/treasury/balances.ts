import { z } from 'zod/v4';
import { parseTreasuryRail, treasuryBalances, treasuryPageLimit, type TreasuryRailDto } from '../../../services/treasury/balances.js';
import { defineRoute } from '../../route.js';
import type { Same } from '../../schema-types.js';

const decimal = (what: string) => z.string().describe(`${what}, a decimal string`);

const treasuryAddressSchema = z
  .object({
    address: z.string().describe('As the ledger records it (EVM lowercased)'),
    path: z.string().nullable().describe("BIP-44 derivation path from the store's key, e.g. m/44'/60'/0'/1/7; null when its index was never recorded"),
    source: z.enum(['payment_link', 'invoice', 'derived']),
    ownerId: z.string().nullable().describe('The payment link or invoice id; null for a derived address'),
    tokenBalance: decimal('Token balance at blockNumber').nullable().describe('Token balance at blockNumber, a decimal string; null when it could not be read'),
    nativeBalance: decimal('Native-coin balance').nullable().describe("The chain's own coin (gas) at blockNumber, a decimal string; null when it could not be read"),
  })
  .meta({ id: 'TreasuryAddress' });

const treasuryRailSchema = z
  .object({
    rail: z.string(),
    displayName: z.string(),
    status: z
      .enum(['read', 'nothing_to_sweep', 'not_built', 'not_configured', 'unavailable'])
      .describe('read: balances below; nothing_to_sweep: the rail pays into your own wallet; not_built: no treasury read for this rail yet; not_configured: no token contract here; unavailable: the chain could not be read now'),
    message: z.string().nullable(),
    tokenSymbol: z.string(),
    tokenDecimals: z.number().int(),
    tokenContract: z.string().nullable(),
    nativeCoin: z.string().nullable(),
    addressCount: z.number().int().describe('Addresses handed out on this rail (every page)'),
    unreadCount: z.number().int().describe('Addresses whose token balance could not be read this time (not in the totals)'),
    totalToken: decimal('Token held on every handed-out address'),
    totalNative: decimal('Native coin held on every handed-out address'),
    blockNumber: z.string().nullable().describe('The block the balances were read at (decimal string); null when nothing was read'),
    blockTime: z.string().nullable().describe("That block's time (ISO 8601)"),
    readAt: z.string().describe('When the balances were read (ISO 8601)'),
    addresses: z.array(treasuryAddressSchema).describe('One page of addresses, by address'),
    nextCursor: z.string().nullable().describe('Pass as cursor, with rail, for the next page; null on the last page'),
  })
  .meta({ id: 'TreasuryRail' });

export const treasuryBalancesRoute = defineRoute({
  method: 'GET',
  url: '/v1/treasury/balances',
  operationId: 'getTreasuryBalances',
  summary: "What sits on the addresses Malipo handed out for the key's store, per rail, read from the chain now in batches",
  tags: ['Treasury'],
  auth: 'secret',
  query: z.strictObject({
    rail: z.string().optional().describe('Only this rail (e.g. USDT_BSC); required with cursor'),
    cursor: z.string().optional().describe("The nextCursor of the previous page of the rail's addresses"),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(treasuryPageLimit.max)
      .default(treasuryPageLimit.default)
      .describe(`Addresses per rail in this page (1..${treasuryPageLimit.max}, default ${treasuryPageLimit.default})`),
  }),
  responses: { 200: { description: 'Per rail, the totals and one page of addresses', schema: z.object({ data: z.array(treasuryRailSchema) }) } },
  handler: async ({ deps, auth, query }) => ({
    data: await treasuryBalances(deps, auth, { rail: query.rail === undefined ? undefined : parseTreasuryRail(query.rail), cursor: query.cursor, limit: query.limit }),
  }),
});

// The schema describes exactly what the service returns.
true satisfies Same<z.infer<typeof treasuryRailSchema>, TreasuryRailDto>;
