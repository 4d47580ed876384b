import type { DatabasePool } from 'slonik';
import type { Logger } from 'pino';
import { encryptCredential, type Keyring } from '../../domain/crypto/credentials.js';
import type { Environment } from '../../domain/environment.js';
import { AppError } from '../../domain/errors.js';
import { darajaEnvironmentFor, type DarajaEnvironment, type MpesaMerchant, type ShortcodeType } from '../../rails/mpesa/merchant.js';
import { saveConnection } from '../../db/mpesa-repo.js';
import { darajaBaseUrl } from '../../rails/mpesa/daraja-client.js';
import { secretsKeyring } from '../keyring.js';
import type { ServiceSettings } from '../settings.js';
import { credentialField } from '../../rails/mpesa/merchant-session.js';
import { validateCredentials } from '../../rails/mpesa/validate-credentials.js';
import { pullNoticePath, registerPullTransactions } from './c2b-pull.js';
import { registerC2bUrls, type C2bRegistrationResult } from './c2b-register.js';

export interface ConnectInput {
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  environment: DarajaEnvironment;
  shortcodeType?: ShortcodeType;
  storeNumber?: string;
  /** Without Pull Transactions, whether a confirmation on the secret URL settles a link alone (default true). */
  c2bSettlesAlone?: boolean;
  /** Whether validation accepts paybill payments whose reference matches no open link (default false). */
  c2bUnallocatedAllowed?: boolean;
  /** Registers the shortcode for Pull Transactions with this nominated number (docs/mobile-money.md, "Backfill"). */
  c2bPullNominatedNumber?: string;
}

export interface ConnectDeps {
  pool: DatabasePool;
  config: ServiceSettings;
  logger?: Logger;
  now?: () => Date;
}

/**
 * Connects (or reconnects) a store's M-Pesa shortcode: checks the environment against the key,
 * validates the credentials with Daraja, then encrypts and saves them with the token the check
 * minted. Nothing is saved unless Daraja accepted them.
 */
export async function connectMobileMoney(
  deps: ConnectDeps,
  who: { storeId: string; environment: Environment },
  input: ConnectInput,
): Promise<{
  ok: true; shortcode: string; environment: DarajaEnvironment; c2bRegistration: C2bRegistrationResult;
  pullRegistration: { registered: boolean; error: string | null } | null;
}> {
  const merchant = merchantOf(input);
  checkEnvironment(who.environment, input.environment);
  const keyring = await secretsKeyring(deps.config, who.environment);
  const now = (deps.now ?? (() => new Date()))();
  const baseUrl = darajaBaseUrl(deps.config, who.environment);
  const result = await validateCredentials(baseUrl, { ...input, merchant }, now);
  if (result.outcome === 'rejected') {
    deps.logger?.info({ storeId: who.storeId, environment: who.environment, shortcode: merchant.shortcode }, 'M-Pesa credentials rejected by the operator');
    throw new AppError('credentials_rejected', `M-Pesa rejected the credentials: ${result.reason}. Nothing was saved.`);
  }
  if (result.outcome === 'unavailable') {
    throw new AppError('upstream_failed', `M-Pesa could not be reached to validate the credentials (${result.reason}). Nothing was saved; try again.`);
  }
  const enc = (name: Parameters<typeof credentialField>[1], value: string) =>
    encryptCredential(keyring, { storeId: who.storeId, field: credentialField(who.environment, name) }, value);
  await saveConnection(
    deps.pool,
    {
      store_id: who.storeId,
      environment: who.environment,
      shortcode: merchant.shortcode,
      shortcode_type: merchant.shortcodeType,
      store_number: merchant.storeNumber,
      consumer_key_enc: enc('consumer_key', input.consumerKey),
      consumer_secret_enc: enc('consumer_secret', input.consumerSecret),
      passkey_enc: enc('passkey', input.passkey),
    },
    {
      tokenEnc: enc('oauth_token', result.token.token),
      expiresAt: new Date(now.getTime() + result.token.expiresInSeconds * 1000).toISOString(),
    },
  );
  deps.logger?.info({ storeId: who.storeId, environment: who.environment, shortcode: merchant.shortcode, evidence: result.evidence }, 'M-Pesa connected');
  // Paybill and till payments from the M-Pesa menu: their URLs, registered with the token just minted.
  const c2bRegistration = await registerC2bUrls(
    { pool: deps.pool, publicBaseUrl: deps.config.publicBaseUrl, logger: deps.logger },
    who,
    { baseUrl, oauthToken: result.token.token, merchant, policy: { c2bSettlesAlone: input.c2bSettlesAlone, c2bUnallocatedAllowed: input.c2bUnallocatedAllowed } },
  );
  // Pull Transactions, where the merchant asked for it (only once the C2B URLs are registered: payments are stored under their shortcode).
  const pullRegistration = input.c2bPullNominatedNumber && c2bRegistration.registered
    ? await registerPullTransactions(deps, who, {
      shortcode: merchant.shortcode, nominatedNumber: input.c2bPullNominatedNumber, callbackUrl: `${deps.config.publicBaseUrl}${pullNoticePath}`,
    })
    : null;
  return { ok: true, shortcode: merchant.shortcode, environment: input.environment, c2bRegistration, pullRegistration };
}

function merchantOf(input: ConnectInput): MpesaMerchant {
  const shortcodeType = input.shortcodeType ?? 'paybill';
  if (shortcodeType === 'till' && !input.storeNumber) {
    throw new AppError('missing_field', "A till needs 'storeNumber': the store (head office) number the till belongs to, which Daraja calls BusinessShortCode.", 'storeNumber');
  }
  if (shortcodeType === 'paybill' && input.storeNumber) {
    throw new AppError('invalid_field', "'storeNumber' is only for tills (shortcodeType 'till'); a paybill is its own BusinessShortCode.", 'storeNumber');
  }
  return { shortcode: input.shortcode, shortcodeType, storeNumber: shortcodeType === 'till' ? input.storeNumber! : null };
}

function checkEnvironment(keyEnvironment: Environment, requested: DarajaEnvironment): void {
  const expected = darajaEnvironmentFor(keyEnvironment);
  if (requested === expected) return;
  const message =
    keyEnvironment === 'test'
      ? "This request uses a test key, so 'environment' must be 'sandbox' (Daraja's sandbox). Connect live credentials with a live secret key (…_live_…)."
      : "This request uses a live key, so 'environment' must be 'live'. Connect sandbox credentials with a test secret key (…_test_…).";
  throw new AppError('invalid_field', message, 'environment');
}
