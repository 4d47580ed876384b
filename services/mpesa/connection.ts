import { findConnection } from '../../db/mpesa-repo.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

/** The connected shortcode as a page may show it: never the (encrypted) credentials. */
export interface MobileMoneyConnectionView {
  shortcode: string;
  shortcodeType: 'paybill' | 'till';
  storeNumber: string | null;
  connectedAt: string;
}

export async function findMobileMoneyConnection(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope): Promise<MobileMoneyConnectionView | null> {
  const row = await findConnection(deps.pool, scope.storeId, scope.environment);
  return row ? { shortcode: row.shortcode, shortcodeType: row.shortcode_type, storeNumber: row.store_number, connectedAt: row.connected_at } : null;
}
