import { z } from 'zod/v4';
import { indexRule, maxIndex } from '../../../domain/hd/derive.js';
import { ensureChainWatchers } from '../../../services/chains/watchers.js';
import { defineRoute } from '../../route.js';
import { deriveReceiveWallet, derivedNetworks } from '../../../services/wallets/derived-wallets.js';

const indexError = `must be ${indexRule}`;

export const deriveWalletRoute = defineRoute({
  method: 'POST',
  url: '/v1/wallets/derive',
  operationId: 'deriveWallet',
  summary: 'The TRON and BSC receive addresses at an HD index (<xpub>/0/<index>)',
  tags: ['Wallets'],
  auth: 'secret',
  body: z
    .strictObject({
      index: z.number({ error: indexError }).int({ error: indexError }).min(0, { error: indexError }).max(maxIndex, { error: indexError }),
    })
    .meta({ id: 'DeriveWallet' }),
  responses: {
    200: {
      description: 'The same index always yields the same addresses',
      schema: z
        .object({
          index: z.number().int(),
          tron: z.string().nullable().describe('Null when no TRON xpub is registered'),
          bsc: z.string().nullable().describe('Null when no EVM xpub is registered; the same address serves Ethereum and Polygon'),
          missing: z.array(z.enum(derivedNetworks)).optional().describe('Present only when an address is null: which xpub to register'),
        })
        .meta({ id: 'DerivedWallet' }),
    },
  },
  handler: async ({ deps, auth, body, request }) => {
    // The gap after the highest is written after the answer; a failed fill is retried by the next one.
    const wallet = await deriveReceiveWallet(deps.pool, auth, body.index, (err) => request.log.warn({ err }, 'could not fill the derived-address gap; the next derive or worker start retries'));
    // Deposits to derived addresses are announced by transfer.confirmed: their watchers must run.
    const rails = [...(wallet.tron ? ['USDT_TRON' as const] : []), ...(wallet.bsc ? ['USDT_BSC' as const] : [])];
    await ensureChainWatchers(deps.temporal, deps.config, rails, auth.environment);
    return wallet;
  },
});
