import { mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatKeyEntry, generateKey, keyringOf, parseKeyring, type Keyring } from '../domain/crypto/credentials.js';
import type { Environment } from '../domain/environment.js';
import { AppError } from '../domain/errors.js';

/** The file a development key is generated into when ENCRYPTION_KEY is unset. */
export const devKeyFileName = 'encryption-key';

/** What the keyring is made from: ENCRYPTION_KEY, parsed, and DATA_DIR for the development key. */
export interface KeyringSettings {
  readonly dataDir: string;
  readonly encryptionKeys: Keyring | undefined;
}

export class EncryptionKeyRequiredError extends Error {
  constructor() {
    super('Live secrets (M-Pesa credentials, webhook signing secrets) are only stored or used when the server has ENCRYPTION_KEY configured (32 random bytes in base64, e.g. `openssl rand -base64 32`).');
    this.name = 'EncryptionKeyRequiredError';
  }
}

const devKeys = new Map<string, Promise<Keyring>>();

/**
 * The keyring for the secrets of one environment, shared by everything stored encrypted at
 * rest: M-Pesa credentials and tokens, webhook signing secrets, secret-bearing idempotent
 * responses. With ENCRYPTION_KEY set, its first key encrypts (a development key found in
 * DATA_DIR stays readable, so its ciphertexts can be moved over with `credentials:reencrypt`).
 * Without it, test-environment secrets use a key generated once into DATA_DIR, with a warning,
 * and live ones are refused.
 */
export async function keyringFor(config: KeyringSettings, environment: Environment, warn = defaultWarn): Promise<Keyring> {
  const dev = await readDevKey(config.dataDir);
  if (config.encryptionKeys) {
    if (!dev) return config.encryptionKeys;
    const keys = [...config.encryptionKeys.byId].map(([id, key]) => ({ id, key }));
    const current = config.encryptionKeys.current;
    const others = keys.filter((k) => k.id !== current.id);
    if (!config.encryptionKeys.byId.has(dev.current.id)) others.push(dev.current);
    return keyringOf([current, ...others]);
  }
  if (environment === 'live') throw new EncryptionKeyRequiredError();
  return dev ?? createDevKey(config.dataDir, warn);
}

async function readDevKey(dataDir: string): Promise<Keyring | null> {
  try {
    return parseKeyring((await readFile(join(dataDir, devKeyFileName), 'utf8')).trim());
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

function createDevKey(dataDir: string, warn: (message: string) => void): Promise<Keyring> {
  let pending = devKeys.get(dataDir);
  if (!pending) {
    pending = writeDevKey(dataDir, warn);
    devKeys.set(dataDir, pending);
    pending.catch(() => devKeys.delete(dataDir));
  }
  return pending;
}

async function writeDevKey(dataDir: string, warn: (message: string) => void): Promise<Keyring> {
  const path = join(dataDir, devKeyFileName);
  await mkdir(dataDir, { recursive: true });
  const key = generateKey();
  try {
    // 'wx': another process that got here first wins, and we read its key instead.
    const file = await open(path, 'wx', 0o600);
    await file.writeFile(`${formatKeyEntry(key)}\n`);
    await file.close();
    warn(`ENCRYPTION_KEY is not set: generated a development key for test-mode secrets (M-Pesa credentials, webhook signing secrets) in ${path}. Set ENCRYPTION_KEY before storing live ones (see docs/mobile-money.md).`);
    return keyringOf([key]);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return (await readDevKey(dataDir))!;
  }
}

/**
 * The keyring for storing a merchant's secret from a request: live without ENCRYPTION_KEY is
 * refused (403 live_mode_forbidden) before anything is written.
 */
export async function secretsKeyring(config: KeyringSettings, environment: Environment): Promise<Keyring> {
  try {
    return await keyringFor(config, environment);
  } catch (err) {
    if (err instanceof EncryptionKeyRequiredError) throw new AppError('live_mode_forbidden', err.message);
    throw err;
  }
}

function defaultWarn(message: string): void {
  process.emitWarning(message, { code: 'MALIPO_DEV_ENCRYPTION_KEY' });
}
