import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Operator credentials at rest: AES-256-GCM with a fresh random 96-bit nonce per value. The
 * associated data binds each ciphertext to the store and field it belongs to, so a ciphertext
 * copied into another store's row (or into another column) fails authentication instead of
 * silently decrypting. The key id travels with the ciphertext so ENCRYPTION_KEY can be rotated:
 *
 *   v1:<keyId>:<nonce base64>:<ciphertext base64>:<tag base64>
 */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

/** The key that encrypts new values, and every key that may still decrypt old ones. */
export interface Keyring {
  current: EncryptionKey;
  byId: ReadonlyMap<string, Buffer>;
}

/** Where a ciphertext belongs: decrypting it anywhere else fails. */
export interface CredentialSlot {
  storeId: string;
  /** A qualified field name, e.g. `mpesa.live.consumer_secret`. */
  field: string;
}

export class CredentialCryptoError extends Error {
  constructor(
    readonly reason: 'malformed' | 'unknown_key' | 'authentication_failed',
    message: string,
  ) {
    super(message);
    this.name = 'CredentialCryptoError';
  }
}

const formatVersion = 'v1';
const nonceBytes = 12;
const tagBytes = 16;
const keyIdPattern = /^[A-Za-z0-9_-]{1,32}$/;
const base64Key = /^[A-Za-z0-9+/]{43}=?$/;

/**
 * Parses ENCRYPTION_KEY: either one base64 key (32 bytes), or a comma-separated list of
 * `keyId:base64` entries. The first entry encrypts; the others only decrypt, which is how a
 * rotation works (put the new key first, keep the old one, run `credentials:reencrypt`, then
 * drop the old one). A bare key gets an id derived from its own bytes, so the same key always
 * has the same id. Error messages never contain key material.
 */
export function parseKeyring(value: string): Keyring {
  const entries = value.split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length === 0) throw new Error('ENCRYPTION_KEY is empty; generate one with `openssl rand -base64 32`.');
  const keys = entries.map((entry, i) => parseEntry(entry, i));
  return keyringOf(keys);
}

/** Builds a keyring whose first key encrypts; refuses two keys with the same id. */
export function keyringOf(keys: EncryptionKey[]): Keyring {
  const byId = new Map<string, Buffer>();
  for (const k of keys) {
    const existing = byId.get(k.id);
    if (existing && !existing.equals(k.key)) throw new Error(`ENCRYPTION_KEY names key id '${k.id}' twice with different keys.`);
    byId.set(k.id, k.key);
  }
  return { current: keys[0]!, byId };
}

function parseEntry(entry: string, index: number): EncryptionKey {
  const colon = entry.indexOf(':');
  const id = colon >= 0 ? entry.slice(0, colon) : undefined;
  const material = colon >= 0 ? entry.slice(colon + 1) : entry;
  const where = `ENCRYPTION_KEY entry ${index + 1}`;
  if (id !== undefined && !keyIdPattern.test(id)) {
    throw new Error(`${where}: the key id must be 1 to 32 letters, digits, '-' or '_' (format keyId:base64).`);
  }
  if (!base64Key.test(material)) {
    throw new Error(`${where}: expected 32 bytes in base64 (44 characters), e.g. the output of \`openssl rand -base64 32\`.`);
  }
  const key = Buffer.from(material, 'base64');
  if (key.length !== 32) throw new Error(`${where}: the key must decode to exactly 32 bytes.`);
  return { id: id ?? derivedKeyId(key), key };
}

/** A stable id for a key given without one: a short hash, which reveals nothing usable about the key. */
export function derivedKeyId(key: Buffer): string {
  return `k${createHash('sha256').update('malipo-key-id\0').update(key).digest('hex').slice(0, 10)}`;
}

export function generateKey(id?: string): EncryptionKey {
  const key = randomBytes(32);
  return { id: id ?? derivedKeyId(key), key };
}

/** Serializes a key as one ENCRYPTION_KEY entry (`keyId:base64`). */
export function formatKeyEntry(k: EncryptionKey): string {
  return `${k.id}:${k.key.toString('base64')}`;
}

function associatedData(slot: CredentialSlot): Buffer {
  return Buffer.from(`malipo.credential.${formatVersion}\0${slot.storeId}\0${slot.field}`, 'utf8');
}

export function encryptCredential(keyring: Keyring, slot: CredentialSlot, plaintext: string): string {
  const nonce = randomBytes(nonceBytes);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, nonce, { authTagLength: tagBytes });
  cipher.setAAD(associatedData(slot));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [formatVersion, keyring.current.id, nonce.toString('base64'), ct.toString('base64'), tag.toString('base64')].join(':');
}

interface Parsed {
  keyId: string;
  nonce: Buffer;
  ct: Buffer;
  tag: Buffer;
}

function parseCiphertext(value: string): Parsed {
  const parts = value.split(':');
  if (parts.length !== 5 || parts[0] !== formatVersion) {
    throw new CredentialCryptoError('malformed', `Not a ${formatVersion} credential ciphertext.`);
  }
  const [, keyId, nonce, ct, tag] = parts as [string, string, string, string, string];
  const parsed = { keyId, nonce: Buffer.from(nonce, 'base64'), ct: Buffer.from(ct, 'base64'), tag: Buffer.from(tag, 'base64') };
  if (!keyIdPattern.test(keyId) || parsed.nonce.length !== nonceBytes || parsed.tag.length !== tagBytes) {
    throw new CredentialCryptoError('malformed', 'The credential ciphertext has a bad key id, nonce or tag.');
  }
  return parsed;
}

/** The id of the key a ciphertext was made with (for rotation: is it the current one?). */
export function credentialKeyId(value: string): string {
  return parseCiphertext(value).keyId;
}

export function decryptCredential(keyring: Keyring, slot: CredentialSlot, value: string): string {
  const p = parseCiphertext(value);
  const key = keyring.byId.get(p.keyId);
  if (!key) {
    throw new CredentialCryptoError('unknown_key', `The credential was encrypted with key id '${p.keyId}', which ENCRYPTION_KEY does not hold.`);
  }
  const decipher = createDecipheriv('aes-256-gcm', key, p.nonce, { authTagLength: tagBytes });
  decipher.setAAD(associatedData(slot));
  decipher.setAuthTag(p.tag);
  try {
    return Buffer.concat([decipher.update(p.ct), decipher.final()]).toString('utf8');
  } catch {
    // GCM says only "unable to authenticate": tampering, a wrong key, or a ciphertext moved to
    // another store or field all look the same, by design.
    throw new CredentialCryptoError('authentication_failed', `The credential for ${slot.field} failed authentication (tampered, moved, or a different key under id '${p.keyId}').`);
  }
}

/** Decrypts with whatever key made it and encrypts again under the current key. */
export function reencryptCredential(keyring: Keyring, slot: CredentialSlot, value: string): string {
  return encryptCredential(keyring, slot, decryptCredential(keyring, slot, value));
}
