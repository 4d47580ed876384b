import { decryptCredential, encryptCredential, CredentialCryptoError, type Keyring } from '../../domain/crypto/credentials.js';
import type { Environment } from '../../domain/environment.js';
import { classifyDarajaError } from './daraja-errors.js';
import type { MpesaMerchant } from './merchant.js';
import { findConnection, findToken, saveToken, withTokenLock, type ConnectionRow } from '../../db/mpesa-repo.js';
import type { DatabasePool } from 'slonik';
import type { MpesaEndpoints } from '../settings.js';
import { darajaBaseUrl, fetchAccessToken, postJson, type JsonAnswer } from './daraja-client.js';
import { keyringFor, type KeyringSettings } from '../../services/keyring.js';

/** Field names of the associated data: a ciphertext only decrypts in its own store, environment and column. */
export const credentialField = (environment: Environment, name: 'consumer_key' | 'consumer_secret' | 'passkey' | 'oauth_token') =>
  `mpesa.${environment}.${name}`;

/** A token is refreshed this long before Daraja says it expires, so it never dies mid-request. */
const tokenMarginMs = 60_000;

export class NotConnectedError extends Error {}
export class CredentialsUnreadableError extends Error {}

export interface MerchantSession {
  merchant: MpesaMerchant;
  passkey: string;
  /** POSTs with the cached token; an "Invalid Access Token" answer refreshes it once and retries. */
  post(path: string, body: unknown): Promise<JsonAnswer>;
}

interface SessionDeps {
  pool: DatabasePool;
  config: KeyringSettings & { readonly mpesa: MpesaEndpoints };
  now?: () => Date;
}

/**
 * Opens the store's M-Pesa connection for one environment: decrypts its credentials (only here,
 * inside the activity that calls the operator) and shares one OAuth token per store and
 * environment through PostgreSQL.
 */
export async function openMerchantSession(deps: SessionDeps, storeId: string, environment: Environment): Promise<MerchantSession> {
  const row = await findConnection(deps.pool, storeId, environment);
  if (!row) throw new NotConnectedError(`The store has not connected M-Pesa in the ${environment} environment.`);
  let keyring: Keyring;
  let creds: { consumerKey: string; consumerSecret: string; passkey: string };
  try {
    keyring = await keyringFor(deps.config, environment);
    creds = decryptConnection(keyring, row);
  } catch (err) {
    throw new CredentialsUnreadableError(`The stored M-Pesa credentials cannot be decrypted: ${(err as Error).message}`);
  }
  const baseUrl = darajaBaseUrl(deps.config, environment);
  const now = deps.now ?? (() => new Date());
  const slot = { storeId, field: credentialField(environment, 'oauth_token') };

  /** The stored token while it has more than the margin left, or undefined. */
  const usable = (stored: Awaited<ReturnType<typeof findToken>>): string | undefined => {
    if (!stored || Date.parse(stored.expiresAt) - tokenMarginMs <= now().getTime()) return undefined;
    try {
      return decryptCredential(keyring, slot, stored.tokenEnc);
    } catch (err) {
      if (!(err instanceof CredentialCryptoError)) throw err;
      return undefined;
    }
  };
  /**
   * A token other than `refused`: one mint per store and environment at a time, across processes.
   * Under the lock, a token another caller minted meanwhile is taken instead of minting again.
   */
  const fresh = (refused?: string): Promise<string> =>
    withTokenLock(deps.pool, storeId, environment, async (tx) => {
      const current = usable(await findToken(tx, storeId, environment));
      if (current !== undefined && current !== refused) return current;
      const t = await fetchAccessToken(baseUrl, creds.consumerKey, creds.consumerSecret);
      const expiresAt = new Date(now().getTime() + t.expiresInSeconds * 1000).toISOString();
      await saveToken(tx, storeId, environment, { tokenEnc: encryptCredential(keyring, slot, t.token), expiresAt });
      return t.token;
    });

  return {
    merchant: { shortcode: row.shortcode, shortcodeType: row.shortcode_type, storeNumber: row.store_number },
    passkey: creds.passkey,
    async post(path, body) {
      const token = usable(await findToken(deps.pool, storeId, environment)) ?? (await fresh());
      const first = await postJson(baseUrl, path, token, body);
      if (!isInvalidToken(first)) return first;
      // Another app using the same keys may have minted a newer token (voiding ours), or it expired early.
      return postJson(baseUrl, path, await fresh(token), body);
    },
  };
}

function isInvalidToken(answer: JsonAnswer): boolean {
  return answer.status !== 200 && classifyDarajaError(answer.status, answer.json ?? answer.text).kind === 'invalid_token';
}

export function decryptConnection(keyring: Keyring, row: ConnectionRow): { consumerKey: string; consumerSecret: string; passkey: string } {
  const slot = (name: 'consumer_key' | 'consumer_secret' | 'passkey') => ({ storeId: row.store_id, field: credentialField(row.environment, name) });
  return {
    consumerKey: decryptCredential(keyring, slot('consumer_key'), row.consumer_key_enc),
    consumerSecret: decryptCredential(keyring, slot('consumer_secret'), row.consumer_secret_enc),
    passkey: decryptCredential(keyring, slot('passkey'), row.passkey_enc),
  };
}
