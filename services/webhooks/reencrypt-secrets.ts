import type { DatabasePool } from 'slonik';
import { credentialKeyId, reencryptCredential, type Keyring } from '../../domain/crypto/credentials.js';
import { listEndpointRefs, rewriteEndpointSecrets, type StoredSecrets } from '../../db/webhook-repo.js';
import { keyringFor, type KeyringSettings } from '../keyring.js';
import { encryptWebhookSecret, isEncryptedSecret, webhookSecretSlot, type EndpointRef } from './secrets.js';

export interface WebhookSecretsReport {
  /** Endpoints that still had a `whsec_` plaintext (written before encryption), now encrypted. */
  encryptedPlaintext: number;
  /** Endpoints whose ciphertexts were under an older key, now under the current one. */
  reencrypted: number;
  alreadyCurrent: number;
  failed: { endpointId: string; storeId: string; environment: string; error: string }[];
}

type Change = 'plaintext' | 'key' | 'none';

/**
 * `credentials:reencrypt`, webhook part: every endpoint's current and previous secret ends up
 * encrypted under the current key — legacy plaintext encrypted, older keys re-encrypted — one
 * endpoint per locked transaction (a concurrent roll waits, then moves the rewritten value). A
 * previous secret whose overlap is over is dropped: nothing signs with it any more.
 */
export async function reencryptWebhookSecrets(pool: DatabasePool, config: KeyringSettings): Promise<WebhookSecretsReport> {
  const report: WebhookSecretsReport = { encryptedPlaintext: 0, reencrypted: 0, alreadyCurrent: 0, failed: [] };
  for (const { id, storeId, environment } of await listEndpointRefs(pool)) {
    try {
      const keyring = await keyringFor(config, environment);
      const ref = { storeId, environment, endpointId: id };
      let change = 'none' as Change;
      const exists = await rewriteEndpointSecrets(pool, id, (stored) => {
        const next = rewritten(keyring, ref, stored);
        change = next.change;
        return next.change === 'none' && !next.droppedPrevious ? null : next.values;
      });
      if (!exists) continue; // deleted meanwhile
      if (change === 'plaintext') report.encryptedPlaintext += 1;
      else if (change === 'key') report.reencrypted += 1;
      else report.alreadyCurrent += 1;
    } catch (err) {
      // The message names the endpoint's slot or the missing key id, never a secret.
      report.failed.push({ endpointId: id, storeId, environment, error: (err as Error).message });
    }
  }
  return report;
}

function rewritten(keyring: Keyring, ref: EndpointRef, stored: StoredSecrets) {
  let change: Change = 'none';
  const redo = (value: string): string => {
    if (!isEncryptedSecret(value)) {
      change = 'plaintext';
      return encryptWebhookSecret(keyring, ref, value);
    }
    if (credentialKeyId(value) === keyring.current.id) return value;
    if (change === 'none') change = 'key';
    // Decrypting proves the value is intact before it is rewritten; a failure aborts this endpoint.
    return reencryptCredential(keyring, webhookSecretSlot(ref), value);
  };
  const droppedPrevious = stored.previousSecret !== null && stored.previousExpired;
  const secret = redo(stored.secret);
  const previousSecret = stored.previousSecret === null || droppedPrevious ? null : redo(stored.previousSecret);
  return { change, droppedPrevious, values: { secret, previousSecret } };
}
