import { hkdfSync } from 'node:crypto';
import { keyringFor, type KeyringSettings } from '../keyring.js';

/**
 * The dashboard's cookie keys are derived from the keyring the service already has (ENCRYPTION_KEY,
 * or the development key in DATA_DIR), so there is no new secret to configure or forget, and every
 * API process of a deployment signs alike. Each use has its own fixed label: a derived key is
 * worthless for anything else, and tells nothing about the encryption key.
 */
const cookieLabel = 'malipo dashboard cookies v1';
const csrfLabel = 'malipo dashboard csrf v1';

export interface DashboardCookieKeys {
  /** The first signs session cookies; the others, from older ENCRYPTION_KEY entries, still verify. */
  cookieSecrets: Buffer[];
  /** Keys the HMAC inside each CSRF token. */
  csrfHmacKey: Buffer;
}

export async function dashboardCookieKeys(config: KeyringSettings): Promise<DashboardCookieKeys> {
  const keyring = await keyringFor(config, 'test');
  const { current } = keyring;
  const older = [...keyring.byId].filter(([id]) => id !== current.id).map(([, key]) => key);
  return {
    cookieSecrets: [current.key, ...older].map((key) => derive(key, cookieLabel)),
    csrfHmacKey: derive(current.key, csrfLabel),
  };
}

const derive = (key: Buffer, label: string): Buffer => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), label, 32));
