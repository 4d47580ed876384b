import { findStorePolicy, updateStorePolicy, type StorePolicy } from '../../db/store-repo.js';
import { notFound } from '../../domain/errors.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

/** The store's payment policy in the scope's environment; another store's id is "not found". */
export async function getStoreSettings(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, clientId: string): Promise<StorePolicy> {
  if (clientId !== scope.storeId) throw notFound('client');
  return findStorePolicy(deps.pool, scope.storeId, scope.environment);
}

/** Changes the policy for links created from now on (open links keep the policy they started with). */
export async function updateStoreSettings(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope, clientId: string, change: Partial<StorePolicy>): Promise<StorePolicy> {
  if (clientId !== scope.storeId) throw notFound('client');
  return updateStorePolicy(deps.pool, scope.storeId, scope.environment, change);
}
