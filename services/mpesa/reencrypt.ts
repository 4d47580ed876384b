import type { DatabasePool } from 'slonik';
import { credentialKeyId, reencryptCredential, type Keyring } from '../../domain/crypto/credentials.js';
import { listConnectionKeys, rewriteConnectionCiphertexts } from '../../db/mpesa-repo.js';
import { keyringFor, type KeyringSettings } from '../keyring.js';
import { credentialField } from '../../rails/mpesa/merchant-session.js';

export interface ReencryptReport {
  currentKeyId: string;
  reencrypted: number;
  alreadyCurrent: number;
  failed: { storeId: string; environment: string; error: string }[];
}

/**
 * `npx malipo credentials:reencrypt`: rewrites every stored M-Pesa credential (and cached token)
 * under the current ENCRYPTION_KEY, one connection per transaction. Run it after putting a new
 * key first in ENCRYPTION_KEY; once it reports no failures, the old key can be removed.
 */
export async function reencryptAllCredentials(pool: DatabasePool, config: KeyringSettings): Promise<ReencryptReport> {
  const report: ReencryptReport = { currentKeyId: '', reencrypted: 0, alreadyCurrent: 0, failed: [] };
  for (const { storeId, environment } of await listConnectionKeys(pool)) {
    try {
      const keyring = await keyringFor(config, environment);
      report.currentKeyId = keyring.current.id;
      let changed = false;
      await rewriteConnectionCiphertexts(pool, storeId, environment, (row, token) => {
        const redo = (name: Parameters<typeof credentialField>[1], value: string) => {
          if (credentialKeyId(value) === keyring.current.id) return value;
          changed = true;
          return reencryptCredential(keyring, { storeId, field: credentialField(environment, name) }, value);
        };
        return {
          consumerKey: redo('consumer_key', row.consumer_key_enc),
          consumerSecret: redo('consumer_secret', row.consumer_secret_enc),
          passkey: redo('passkey', row.passkey_enc),
          token: token ? redoToken(keyring, storeId, environment, token.tokenEnc) : null,
        };
      });
      if (changed) report.reencrypted += 1;
      else report.alreadyCurrent += 1;
    } catch (err) {
      report.failed.push({ storeId, environment, error: (err as Error).message });
    }
  }
  return report;
}

/** A token that no longer decrypts is simply dropped from the rewrite: a new one is minted on use. */
function redoToken(keyring: Keyring, storeId: string, environment: 'test' | 'live', value: string): string | null {
  try {
    if (credentialKeyId(value) === keyring.current.id) return value;
    return reencryptCredential(keyring, { storeId, field: credentialField(environment, 'oauth_token') }, value);
  } catch {
    return null;
  }
}
