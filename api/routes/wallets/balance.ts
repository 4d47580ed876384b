import { z } from 'zod/v4';
import { AppError } from '../../../domain/errors.js';
import { indexRule, maxIndex } from '../../../domain/hd/derive.js';
import { defineRoute } from '../../route.js';
import { derivedAddressFor, derivedNetworks, readUsdtBalance } from '../../../services/wallets/derived-wallets.js';

const indexError = `must be ${indexRule}`;

function parseIndex(value: string): number {
  const index = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!(index <= maxIndex)) throw new AppError('invalid_field', `Invalid 'index': ${indexError}.`, 'index');
  return index;
}

export const derivedWalletBalanceRoute = defineRoute({
  method: 'GET',
  url: '/v1/wallets/derive/:index/balance',
  operationId: 'getDerivedWalletBalance',
  summary: 'Live USDT balance of the receive address at an HD index',
  tags: ['Wallets'],
  auth: 'secret',
  // Checked in the handler: a bad index is a 400 naming the field, not the 404 of a malformed id.
  params: z.object({ index: z.string().describe(`The HD index, ${indexRule}`) }),
  query: z.strictObject({ network: z.enum(derivedNetworks, { error: 'must be TRON or BSC' }) }),
  responses: {
    200: {
      description: 'Balance read from the chain just now',
      schema: z
        .object({
          index: z.number().int(),
          address: z.string(),
          network: z.enum(derivedNetworks),
          balance: z.string().describe('USDT, decimal string (BSC USDT has 18 decimals, TRON 6)'),
        })
        .meta({ id: 'DerivedWalletBalance' }),
    },
    502: { description: 'The chain node failed or answered wrongly; no balance is guessed' },
  },
  handler: async ({ deps, auth, params, query, request }) => {
    const index = parseIndex(params.index);
    const address = await derivedAddressFor(deps.pool, auth, index, query.network);
    try {
      const balance = await readUsdtBalance(deps.config.rails, auth, query.network, address);
      return { index, address, network: query.network, balance };
    } catch (err) {
      if (err instanceof AppError) throw err;
      request.log.warn({ network: query.network, environment: auth.environment, reason: (err as Error).message }, 'balance read failed');
      throw new AppError('upstream_failed', `Could not read the USDT balance from the ${query.network} network; nothing was guessed. Try again shortly.`);
    }
  },
});
