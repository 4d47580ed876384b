import { z } from 'zod/v4';
import { accountPaths, type WalletKind } from '../../../domain/hd/xpub.js';
import { defineRoute } from '../../route.js';
import { clientParams, connectedWalletSchema } from './schemas.js';
import { connectWallet } from '../../../services/wallets/merchant-wallets.js';

/** PUT /v1/merchant/clients/:clientId/wallets/{tron,evm}: register an account-level xpub. */
function connectXpubRoute(kind: WalletKind, operationId: string, label: string) {
  return defineRoute({
    method: 'PUT',
    url: `/v1/merchant/clients/:clientId/wallets/${kind}`,
    operationId,
    summary: `Register the ${label} account xpub (${accountPaths[kind]}) for the key's environment`,
    tags: ['Wallets'],
    auth: 'secret',
    params: clientParams,
    body: z
      .strictObject({
        xpub: z
          .string({ error: 'must be a string: the account-level extended public key (xpub…)' })
          .max(200, 'is too long for an extended public key')
          .describe(`Account-level extended public key at ${accountPaths[kind]} (depth 3, xpub… version bytes)`),
      })
      .meta({ id: `Connect${label.replace(/\W/g, '')}Wallet` }),
    responses: {
      200: { description: 'Registered; replaces any earlier key of this kind', schema: connectedWalletSchema },
      409: { description: 'wallet_key_in_use: another store holds this key (a key belongs to one store; its two environments may share it). Nothing is stored.' },
    },
    handler: async ({ deps, auth, params, body }) => connectWallet(deps.pool, auth, params.clientId, kind, body.xpub),
  });
}

export const connectTronWalletRoute = connectXpubRoute('tron', 'connectTronWallet', 'TRON');
export const connectEvmWalletRoute = connectXpubRoute('evm', 'connectEvmWallet', 'EVM');
