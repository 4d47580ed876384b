import { findConnection } from '../../db/mpesa-repo.js';
import { findC2bRegistration } from '../../db/mpesa-c2b-repo.js';
import { findC2bSettings } from '../../db/mpesa-pull-repo.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

/** The connected shortcode as a page may show it: never the (encrypted) credentials. */
export interface MobileMoneyConnectionView {
  shortcode: string;
  shortcodeType: 'paybill' | 'till';
  storeNumber: string | null;
  connectedAt: string;
  /** Registration of the C2B (paybill from the M-Pesa menu) URLs: when, which API, or Daraja's refusal. */
  c2b: { registeredAt: string | null; apiVersion: string | null; error: string | null };
  /** The store's C2B trust policy (docs/mobile-money.md, "Trust policy"). */
  c2bPolicy: { settlesAlone: boolean; unallocatedAllowed: boolean };
  /**
   * Registration for Pull Transactions: when it was accepted (null: never), the last refusal (null
   * when the last attempt succeeded or none was made), and the end of the last window pulled.
   */
  pull: { registeredAt: string | null; error: string | null; pulledAt: string | null };
}

export async function findMobileMoneyConnection(deps: Pick<ServiceDeps, 'pool'>, scope: StoreScope): Promise<MobileMoneyConnectionView | null> {
  const row = await findConnection(deps.pool, scope.storeId, scope.environment);
  if (!row) return null;
  const [reg, settings] = await Promise.all([
    findC2bRegistration(deps.pool, scope.storeId, scope.environment),
    findC2bSettings(deps.pool, scope.storeId, scope.environment),
  ]);
  return {
    shortcode: row.shortcode,
    shortcodeType: row.shortcode_type,
    storeNumber: row.store_number,
    connectedAt: row.connected_at,
    c2b: { registeredAt: reg?.registered_at ?? null, apiVersion: reg?.api_version ?? null, error: reg?.error ?? (reg?.registered_at ? null : 'not registered yet: connect again') },
    c2bPolicy: { settlesAlone: settings?.settles_alone ?? true, unallocatedAllowed: settings?.unallocated_allowed ?? false },
    pull: { registeredAt: settings?.pull_registered_at ?? null, error: settings?.pull_error ?? null, pulledAt: settings?.pulled_at ?? null },
  };
}
