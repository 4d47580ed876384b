import type { DatabasePool } from 'slonik';
import { keyringFor, type KeyringSettings } from '../../services/keyring.js';
import { deleteExpiredKey, listMarkedResponses, rewriteStoredResponse } from '../../db/idempotency-repo.js';
import { environments, type Environment } from '../../domain/environment.js';
import { resealBody, sealedMarker } from './idempotency-seal.js';

export interface SealedResponsesReport {
  reencrypted: number;
  alreadyCurrent: number;
  /** Past their 24 hours: deleted rather than re-encrypted (nothing replays them). */
  expiredDeleted: number;
  failed: { storeId: string; environment: string; error: string }[];
}

/**
 * `credentials:reencrypt`, idempotency part: the encrypted secret fields of stored responses
 * (api/plugins/idempotency-seal.ts) are moved to the current key, so the old key can go without
 * breaking a replay within the 24 hours.
 */
export async function reencryptSealedResponses(pool: DatabasePool, config: KeyringSettings): Promise<SealedResponsesReport> {
  const report: SealedResponsesReport = { reencrypted: 0, alreadyCurrent: 0, expiredDeleted: 0, failed: [] };
  for (const record of await listMarkedResponses(pool, sealedMarker)) {
    try {
      if (!record.fresh) {
        await deleteExpiredKey(pool, record);
        report.expiredDeleted += 1;
        continue;
      }
      if (!(environments as readonly string[]).includes(record.environment)) throw new Error(`unknown environment '${record.environment}'`);
      const keyring = await keyringFor(config, record.environment as Environment);
      let changed = false;
      await rewriteStoredResponse(pool, record, (body) => {
        const next = resealBody(keyring, record, body);
        changed = next !== null;
        return next;
      });
      if (changed) report.reencrypted += 1;
      else report.alreadyCurrent += 1;
    } catch (err) {
      report.failed.push({ storeId: record.storeId, environment: record.environment, error: (err as Error).message });
    }
  }
  return report;
}
