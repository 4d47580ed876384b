import { findStoreConnections, findWalletKeys } from '../../db/store-repo.js';
import { type RailId } from '../../domain/rails.js';
import { availableRails } from '../../rails/registry.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

export type { WalletSlot } from '../../db/wallet-repo.js';

/** The rails a store can take payments on now (what it has connected or registered). */
export async function availableRailsOf(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope): Promise<RailId[]> {
  return availableRails(await findStoreConnections(deps.pool, scope.storeId, scope.environment));
}

/** The store's registered extended public keys (TRON, EVM) and Solana address. */
export function walletKeysOf(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope) {
  return findWalletKeys(deps.pool, scope.storeId, scope.environment);
}
