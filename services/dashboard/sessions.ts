import {
  deleteStaleDashboardSessions,
  findActiveDashboardSession,
  insertDashboardSession,
  revokeDashboardSession,
} from '../../db/dashboard-session-repo.js';
import type { KeyOwner } from '../../db/store-repo.js';
import type { ServiceDeps } from '../deps.js';

export type { KeyOwner };

/** Sessions ended or expired this many days ago are deleted at the next sign-in. */
const keepEndedDays = 7;

/** The live session a cookie's token hash names, with its store; null if ended, expired or unknown. */
export function findDashboardSession(deps: Pick<ServiceDeps, 'pool'>, tokenHash: Buffer) {
  return findActiveDashboardSession(deps.pool, tokenHash);
}

/** Signs in: ends the browser's previous session (if any), stores the new one (its hash only), tidies old ones. */
export async function startDashboardSession(
  deps: Pick<ServiceDeps, 'pool'>,
  s: { previousTokenHash?: Buffer; tokenHash: Buffer; owner: KeyOwner; lifetimeSeconds: number },
): Promise<void> {
  if (s.previousTokenHash) await revokeDashboardSession(deps.pool, s.previousTokenHash);
  await insertDashboardSession(deps.pool, { tokenHash: s.tokenHash, ...s.owner, lifetimeSeconds: s.lifetimeSeconds });
  await deleteStaleDashboardSessions(deps.pool, keepEndedDays);
}

export function endDashboardSession(deps: Pick<ServiceDeps, 'pool'>, tokenHash: Buffer): Promise<boolean> {
  return revokeDashboardSession(deps.pool, tokenHash);
}
