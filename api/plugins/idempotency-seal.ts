import { createHash } from 'node:crypto';
import {
  credentialKeyId,
  decryptCredential,
  encryptCredential,
  reencryptCredential,
  type CredentialSlot,
  type Keyring,
} from '../../domain/crypto/credentials.js';

/**
 * Secret-bearing responses in the Idempotency-Key store. A route that answers with a secret
 * (`idempotency: { sealedFields: ['secret'] }`) has those fields stored as
 *
 *   { ...body without the fields, "$sealed": { "secret": "v1:<keyId>:…" } }
 *
 * encrypted with the ENCRYPTION_KEY keyring (AES-256-GCM), bound to the record's store,
 * environment, key and field. A replay decrypts them back, so it answers with the same response
 * while the table never holds the secret in clear. No API response has a top-level `$sealed`,
 * so the marker cannot collide with a real field.
 */
export const sealedMarker = '$sealed';

export interface RecordRef {
  storeId: string;
  environment: string;
  key: string;
}

type Body = Record<string, unknown>;

const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The idempotency key is the client's string: it is hashed into the slot, not used as is. */
export function sealedFieldSlot(r: RecordRef, field: string): CredentialSlot {
  const keyHash = createHash('sha256').update(r.key, 'utf8').digest('hex').slice(0, 32);
  return { storeId: r.storeId, field: `idempotency.${r.environment}.${keyHash}.${field}` };
}

/** Whether the body has any of `fields` to seal (an error answer has none). */
export function needsSealing(body: unknown, fields: readonly string[]): boolean {
  return isObject(body) && fields.some((f) => typeof body[f] === 'string');
}

export function sealBody(keyring: Keyring, r: RecordRef, body: unknown, fields: readonly string[]): unknown {
  if (!needsSealing(body, fields)) return body;
  const copy: Body = { ...(body as Body) };
  const sealed: Record<string, string> = {};
  for (const f of fields) {
    const value = copy[f];
    if (typeof value !== 'string') continue;
    sealed[f] = encryptCredential(keyring, sealedFieldSlot(r, f), value);
    delete copy[f];
  }
  return { ...copy, [sealedMarker]: sealed };
}

export function isSealed(stored: unknown): stored is Body & { [sealedMarker]: Record<string, string> } {
  return isObject(stored) && isObject(stored[sealedMarker]);
}

/** The response as first sent. Throws CredentialCryptoError when a sealed field cannot be read. */
export function unsealBody(keyring: Keyring, r: RecordRef, stored: unknown): unknown {
  if (!isSealed(stored)) return stored;
  const { [sealedMarker]: sealed, ...body } = stored;
  for (const [f, value] of Object.entries(sealed)) body[f] = decryptCredential(keyring, sealedFieldSlot(r, f), value);
  return body;
}

/** For key rotation: the stored record with every sealed field under the current key, or null if it already is. */
export function resealBody(keyring: Keyring, r: RecordRef, stored: unknown): unknown | null {
  if (!isSealed(stored)) return null;
  const entries = Object.entries(stored[sealedMarker]);
  if (entries.every(([, value]) => credentialKeyId(value) === keyring.current.id)) return null;
  const sealed = Object.fromEntries(entries.map(([f, value]) => [f, reencryptCredential(keyring, sealedFieldSlot(r, f), value)]));
  return { ...stored, [sealedMarker]: sealed };
}
