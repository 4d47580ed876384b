import { z } from 'zod/v4';
import { defineRoute } from '../../route.js';
import { clientParams, connectedWalletSchema } from './schemas.js';
import { connectWallet } from '../../../services/wallets/merchant-wallets.js';

export const connectSolanaWalletRoute = defineRoute({
  method: 'PUT',
  url: '/v1/merchant/clients/:clientId/wallets/solana',
  operationId: 'connectSolanaWallet',
  summary: "Connect the Solana wallet address for the key's environment",
  tags: ['Wallets'],
  auth: 'secret',
  params: clientParams,
  body: z
    .strictObject({
      address: z
        .string({ error: 'must be a string: your Solana wallet address (base58)' })
        .max(100, 'is too long for a Solana address')
        .describe('Wallet (owner) address, base58, on the ed25519 curve; not a token account'),
    })
    .meta({ id: 'ConnectSolanaWallet' }),
  responses: { 200: { description: 'Connected; replaces any earlier address', schema: connectedWalletSchema } },
  handler: async ({ deps, auth, params, body }) => connectWallet(deps.pool, auth, params.clientId, 'solana', body.address),
});
