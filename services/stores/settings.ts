import { findStorePolicy, updateStorePolicy, type StorePolicy } from '../../db/store-repo.js';
import { findStoreBranding, renameStore, setDefaultRedirectUrl, type LogoRef } from '../../db/store-branding-repo.js';
import { AppError, notFound } from '../../domain/errors.js';
import { defaultRedirectProblem } from '../../domain/redirect-url.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';

/**
 * A store's settings as the API and the dashboard see them. The payment policy and the default
 * redirect URL belong to the scope's environment; the name and the logo to the whole store.
 */
export interface StoreSettings extends StorePolicy {
  /** Given to links created without `redirectUrl` (from the moment it is set). */
  defaultRedirectUrl: string | null;
  storeName: string;
  /** The checkout logo, on our own origin under its content hash; null without one. */
  logoUrl: string | null;
}

export interface StoreSettingsChange extends Partial<StorePolicy> {
  /** null clears it. */
  defaultRedirectUrl?: string | null;
  storeName?: string;
}

type Deps = Pick<ServiceDeps, 'pool' | 'config'>;

const logoExtensions: Record<LogoRef['contentType'], string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/** Where the checkout loads a logo: a name that changes with the bytes, so it is cached for good. */
export const logoPath = (logo: LogoRef): string => `/branding/logos/${logo.sha256}.${logoExtensions[logo.contentType]}`;

export async function getStoreSettings(deps: Deps, scope: StoreScope, clientId: string): Promise<StoreSettings> {
  if (clientId !== scope.storeId) throw notFound('client');
  return settingsOf(deps, scope);
}

async function settingsOf(deps: Deps, scope: StoreScope): Promise<StoreSettings> {
  const [policy, branding] = await Promise.all([
    findStorePolicy(deps.pool, scope.storeId, scope.environment),
    findStoreBranding(deps.pool, scope.storeId, scope.environment),
  ]);
  return {
    ...policy,
    defaultRedirectUrl: branding.defaultRedirectUrl,
    storeName: branding.name,
    logoUrl: branding.logo ? `${deps.config.publicBaseUrl}${logoPath(branding.logo)}` : null,
  };
}

/**
 * Changes the settings, all or nothing. Policy changes apply to links created from now on (open
 * links keep the policy they started with); so does the default redirect URL.
 */
export async function updateStoreSettings(deps: Deps, scope: StoreScope, clientId: string, change: StoreSettingsChange): Promise<StoreSettings> {
  if (clientId !== scope.storeId) throw notFound('client');
  // The schemas check these too; the service checks again so no caller can skip the rules.
  if (change.defaultRedirectUrl) {
    const problem = defaultRedirectProblem(change.defaultRedirectUrl);
    if (problem) throw new AppError('invalid_field', `Invalid 'defaultRedirectUrl': it ${problem}.`, 'defaultRedirectUrl');
  }
  const name = change.storeName?.trim();
  if (name !== undefined && (name.length < 1 || name.length > 200)) {
    throw new AppError('invalid_field', "Invalid 'storeName': must be 1 to 200 characters.", 'storeName');
  }
  await deps.pool.transaction(async (tx) => {
    const { lateWatchMinutes, underpaymentToleranceBps } = change;
    if (lateWatchMinutes !== undefined || underpaymentToleranceBps !== undefined) {
      await updateStorePolicy(tx, scope.storeId, scope.environment, { lateWatchMinutes, underpaymentToleranceBps });
    }
    if (change.defaultRedirectUrl !== undefined) await setDefaultRedirectUrl(tx, scope.storeId, scope.environment, change.defaultRedirectUrl);
    if (name !== undefined) await renameStore(tx, scope.storeId, name);
  });
  return settingsOf(deps, scope);
}
