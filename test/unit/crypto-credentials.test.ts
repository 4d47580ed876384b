import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  CredentialCryptoError,
  credentialKeyId,
  decryptCredential,
  derivedKeyId,
  encryptCredential,
  formatKeyEntry,
  generateKey,
  keyringOf,
  parseKeyring,
  reencryptCredential,
} from '../../domain/crypto/credentials.js';
import { devKeyFileName, EncryptionKeyRequiredError, keyringFor } from '../../services/keyring.js';
import { ConfigError, loadConfig } from '../../config/config.js';

const slot = { storeId: 'cli_store1', field: 'mpesa.test.passkey' };
const k1 = generateKey('k1');
const k2 = generateKey('k2');
const secret = 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919';

const failure = (fn: () => unknown): CredentialCryptoError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CredentialCryptoError);
    return err as CredentialCryptoError;
  }
  throw new Error('expected a CredentialCryptoError');
};

describe('credential encryption (AES-256-GCM)', () => {
  const ring = keyringOf([k1]);

  it('round-trips and stores the key id, a 96-bit nonce and a 128-bit tag beside the ciphertext', () => {
    const ct = encryptCredential(ring, slot, secret);
    const [version, keyId, nonce, body, tag] = ct.split(':');
    expect([version, keyId]).toEqual(['v1', 'k1']);
    expect(Buffer.from(nonce!, 'base64')).toHaveLength(12);
    expect(Buffer.from(tag!, 'base64')).toHaveLength(16);
    expect(Buffer.from(body!, 'base64')).toHaveLength(Buffer.byteLength(secret));
    expect(ct).not.toContain(secret);
    expect(decryptCredential(ring, slot, ct)).toBe(secret);
  });

  it('uses a fresh nonce for every value', () => {
    const a = encryptCredential(ring, slot, secret).split(':');
    const b = encryptCredential(ring, slot, secret).split(':');
    expect(a[2]).not.toBe(b[2]);
    expect(a[3]).not.toBe(b[3]);
  });

  it('refuses a tampered nonce, ciphertext or tag', () => {
    const parts = encryptCredential(ring, slot, secret).split(':');
    for (const i of [2, 3, 4]) {
      const bytes = Buffer.from(parts[i]!, 'base64');
      bytes[0] = bytes[0]! ^ 0x01;
      const tampered = [...parts];
      tampered[i] = bytes.toString('base64');
      expect(failure(() => decryptCredential(ring, slot, tampered.join(':'))).reason).toBe('authentication_failed');
    }
  });

  it('refuses a ciphertext moved to another store or another field (associated data)', () => {
    const ct = encryptCredential(ring, slot, secret);
    expect(failure(() => decryptCredential(ring, { ...slot, storeId: 'cli_store2' }, ct)).reason).toBe('authentication_failed');
    expect(failure(() => decryptCredential(ring, { ...slot, field: 'mpesa.test.consumer_secret' }, ct)).reason).toBe('authentication_failed');
    expect(failure(() => decryptCredential(ring, { ...slot, field: 'mpesa.live.passkey' }, ct)).reason).toBe('authentication_failed');
  });

  it('refuses a different key under the same id, and names an unknown key id', () => {
    const ct = encryptCredential(ring, slot, secret);
    expect(failure(() => decryptCredential(keyringOf([generateKey('k1')]), slot, ct)).reason).toBe('authentication_failed');
    const unknown = failure(() => decryptCredential(keyringOf([k2]), slot, ct));
    expect(unknown.reason).toBe('unknown_key');
    expect(unknown.message).toContain("'k1'");
  });

  it('refuses malformed values', () => {
    for (const bad of ['', 'plain', 'v2:k1:a:b:c', 'v1:k1:AAAA:AAAA:AAAA', 'v1:bad id:AAAAAAAAAAAAAAAA:AA:AAAAAAAAAAAAAAAAAAAAAA==']) {
      expect(failure(() => decryptCredential(ring, slot, bad)).reason).toBe('malformed');
    }
  });

  it('rotates: the new key encrypts, the old one still decrypts, re-encryption moves values over', () => {
    const old = encryptCredential(keyringOf([k1]), slot, secret);
    const rotated = parseKeyring(`${formatKeyEntry(k2)},${formatKeyEntry(k1)}`);
    expect(rotated.current.id).toBe('k2');
    expect(decryptCredential(rotated, slot, old)).toBe(secret);
    const moved = reencryptCredential(rotated, slot, old);
    expect(credentialKeyId(moved)).toBe('k2');
    // After the old key is dropped, moved values still decrypt and unmoved ones say which key they need.
    const onlyNew = parseKeyring(formatKeyEntry(k2));
    expect(decryptCredential(onlyNew, slot, moved)).toBe(secret);
    expect(failure(() => decryptCredential(onlyNew, slot, old)).reason).toBe('unknown_key');
  });
});

describe('ENCRYPTION_KEY parsing', () => {
  it('takes a bare base64 key with an id derived from the key, stable across parses', () => {
    const bare = k1.key.toString('base64');
    const ring = parseKeyring(bare);
    expect(ring.current.id).toBe(derivedKeyId(k1.key));
    expect(parseKeyring(` ${bare} `).current.id).toBe(ring.current.id);
    expect(ring.current.id).not.toContain(bare.slice(0, 8));
  });

  it('refuses bad entries without echoing key material', () => {
    const short = Buffer.alloc(16, 7).toString('base64');
    const cases = [short, 'not base64 at all', `bad id!:${k1.key.toString('base64')}`, `a:${k1.key.toString('base64')},a:${k2.key.toString('base64')}`, ','];
    for (const value of cases) {
      let message = '';
      try {
        parseKeyring(value);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).not.toBe('');
      expect(message).not.toContain(k1.key.toString('base64'));
      expect(message).not.toContain(short);
    }
  });

  it('is parsed by the config, whose problems list never shows the key', () => {
    const config = loadConfig({ ENCRYPTION_KEY: `k2:${k2.key.toString('base64')},k1:${k1.key.toString('base64')}` });
    expect(config.encryptionKeys?.current.id).toBe('k2');
    expect([...config.encryptionKeys!.byId.keys()]).toEqual(['k2', 'k1']);
    const bad = Buffer.alloc(31, 1).toString('base64');
    expect(() => loadConfig({ ENCRYPTION_KEY: bad })).toThrow(ConfigError);
    try {
      loadConfig({ ENCRYPTION_KEY: bad });
    } catch (err) {
      expect((err as ConfigError).problems.join('\n')).toMatch(/ENCRYPTION_KEY.*32 bytes/);
      expect((err as ConfigError).message).not.toContain(bad);
    }
  });
});

describe('development key', () => {
  const dirs: string[] = [];
  const tempDir = async () => {
    const d = await mkdtemp(join(tmpdir(), 'malipo-key-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('is generated once into DATA_DIR with a warning, readable only by the owner, for test credentials', async () => {
    const dataDir = await tempDir();
    const warnings: string[] = [];
    const config = loadConfig({ DATA_DIR: dataDir });
    const first = await keyringFor(config, 'test', (m) => warnings.push(m));
    const again = await keyringFor(config, 'test', (m) => warnings.push(m));
    expect(again.current.id).toBe(first.current.id);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('ENCRYPTION_KEY is not set');
    const file = join(dataDir, devKeyFileName);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(parseKeyring(await readFile(file, 'utf8')).current.id).toBe(first.current.id);
  });

  it('is never used for live credentials: those need ENCRYPTION_KEY', async () => {
    const config = loadConfig({ DATA_DIR: await tempDir() });
    await expect(keyringFor(config, 'live')).rejects.toBeInstanceOf(EncryptionKeyRequiredError);
  });

  it('stays readable once ENCRYPTION_KEY is set, so its values can be re-encrypted', async () => {
    const dataDir = await tempDir();
    const dev = await keyringFor(loadConfig({ DATA_DIR: dataDir }), 'test', () => undefined);
    const old = encryptCredential(dev, slot, secret);
    const configured = await keyringFor(loadConfig({ DATA_DIR: dataDir, ENCRYPTION_KEY: formatKeyEntry(k2) }), 'live');
    expect(configured.current.id).toBe('k2');
    expect(credentialKeyId(reencryptCredential(configured, slot, old))).toBe('k2');
  });
});
