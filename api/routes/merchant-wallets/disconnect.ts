import type { WalletSlot } from '../../../services/stores/stores.js';
import { defineRoute } from '../../route.js';
import { clientParams, disconnectedWalletSchema } from './schemas.js';
import { disconnectWallet, walletNetworks } from '../../../services/wallets/merchant-wallets.js';

/**
 * DELETE /v1/merchant/clients/:clientId/wallets/{tron,evm,solana}. New links and derive stop
 * using the wallet; links already created keep their addresses and are still watched.
 */
function disconnectRoute(slot: WalletSlot, operationId: string) {
  return defineRoute({
    method: 'DELETE',
    url: `/v1/merchant/clients/:clientId/wallets/${slot}`,
    operationId,
    summary: `Disconnect the ${walletNetworks[slot]} wallet in the key's environment`,
    tags: ['Wallets'],
    auth: 'secret',
    params: clientParams,
    responses: { 200: { description: 'Disconnected', schema: disconnectedWalletSchema } },
    handler: async ({ deps, auth, params }) => disconnectWallet(deps.pool, auth, params.clientId, slot),
  });
}

export const disconnectTronWalletRoute = disconnectRoute('tron', 'disconnectTronWallet');
export const disconnectEvmWalletRoute = disconnectRoute('evm', 'disconnectEvmWallet');
export const disconnectSolanaWalletRoute = disconnectRoute('solana', 'disconnectSolanaWallet');
