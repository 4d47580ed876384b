import {
  CredentialCryptoError,
  decryptCredential,
  encryptCredential,
  type CredentialSlot,
  type Keyring,
} from '../../domain/crypto/credentials.js';
import type { EndpointRow } from '../../db/webhook-repo.js';
import type { Environment } from '../../domain/environment.js';
import { secretPrefix } from '../../domain/webhooks/signing.js';
import { EncryptionKeyRequiredError } from '../keyring.js';

/**
 * Webhook signing secrets at rest: AES-256-GCM with the same keyring as M-Pesa credentials
 * (domain/crypto/credentials.ts). The slot names the endpoint, so a ciphertext copied to another
 * endpoint or store fails to decrypt. The current and the previous (rolled) secret share the
 * slot: rolling moves the current ciphertext into `previous_secret` as it is.
 *
 * Rows written before encryption hold the `whsec_…` plaintext; they are read as they are until
 * `credentials:reencrypt` (or the next roll, for the previous secret) encrypts them.
 */
export interface EndpointRef {
  storeId: string;
  environment: Environment;
  endpointId: string;
}

/** What every stored ciphertext starts with (`v1:<keyId>:…`); a plaintext secret starts with `whsec_`. */
const ciphertextPrefix = 'v1:';

export function webhookSecretSlot(e: EndpointRef): CredentialSlot {
  return { storeId: e.storeId, field: `webhook.${e.environment}.${e.endpointId}` };
}

export const isEncryptedSecret = (stored: string): boolean => stored.startsWith(ciphertextPrefix);
export const isPlaintextSecret = (stored: string): boolean => stored.startsWith(secretPrefix);

export function encryptWebhookSecret(keyring: Keyring, e: EndpointRef, secret: string): string {
  if (!isPlaintextSecret(secret)) throw new Error('only a whsec_ secret is encrypted');
  return encryptCredential(keyring, webhookSecretSlot(e), secret);
}

/**
 * The stored value made safe to keep: a legacy plaintext is encrypted, a ciphertext is kept as
 * it is (encrypting needs no decryption, so the API can do this without ever reading a secret).
 */
export function protectStoredSecret(keyring: Keyring, e: EndpointRef, stored: string): string {
  return isEncryptedSecret(stored) ? stored : encryptWebhookSecret(keyring, e, stored);
}

/**
 * The `whsec_` secret for signing. `keyring` is asked for only when the value is encrypted, so a
 * legacy plaintext row keeps working wherever it did. Anything else fails loudly: a tampered,
 * moved or unknown-key ciphertext must never turn into a signature made with garbage.
 */
export async function openWebhookSecret(keyring: () => Promise<Keyring>, e: EndpointRef, stored: string): Promise<string> {
  if (isPlaintextSecret(stored)) return stored;
  if (!isEncryptedSecret(stored)) throw new CredentialCryptoError('malformed', `The stored signing secret of ${e.endpointId} is neither a ciphertext nor a whsec_ secret.`);
  const secret = decryptCredential(await keyring(), webhookSecretSlot(e), stored);
  if (!isPlaintextSecret(secret)) throw new CredentialCryptoError('malformed', `The signing secret of ${e.endpointId} decrypted to something that is not a whsec_ secret.`);
  return secret;
}

/**
 * The `whsec_` secrets to sign with: the current one, plus the rolled one while its overlap
 * window lasts. They are stored encrypted and decrypted only here, right before signing (a
 * legacy plaintext row is used as it is); `keyring` is called only if something is encrypted.
 * `opened`, when given, holds what one fan-out decrypted, by endpoint and stored value: each
 * secret is decrypted once per fan-out instead of once per event (a cipher per attempt was 6 %
 * of the relay's CPU). Its owner drops it when the fan-out ends; nothing outlives it.
 */
export async function signingSecrets(e: EndpointRow, now: Date, keyring: () => Promise<Keyring>, opened?: Map<string, Promise<string>>): Promise<string[]> {
  const overlap = e.previous_secret && e.previous_secret_expires_at && Date.parse(e.previous_secret_expires_at) > now.getTime();
  const stored = overlap ? [e.secret, e.previous_secret!] : [e.secret];
  const ref = { storeId: e.store_id, environment: e.environment, endpointId: e.id };
  return Promise.all(stored.map((value) => {
    if (!opened) return openWebhookSecret(keyring, ref, value);
    const id = `${e.id}\u0000${value}`;
    let secret = opened.get(id);
    if (secret === undefined) opened.set(id, (secret = openWebhookSecret(keyring, ref, value)));
    return secret;
  }));
}

/** What the delivery log says when a secret cannot be used; the details (no secret in them) go to the worker log. */
export function unusableSecret(err: CredentialCryptoError | EncryptionKeyRequiredError): string {
  if (err instanceof EncryptionKeyRequiredError) {
    return 'not sent: the signing secret of this live endpoint is encrypted, and the server has no ENCRYPTION_KEY configured to read it; nothing was signed';
  }
  return 'not sent: the signing secret stored for this endpoint could not be decrypted (tampered with, or encrypted under a key the server no longer holds); nothing was signed. The worker log has the details';
}
