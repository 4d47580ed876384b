import {
  deleteStaleDashboardSessions,
  findActiveDashboardSession,
  insertDashboardSession,
  moveDashboardSession,
  revokeDashboardSession,
  revokeUserSessions,
} from '../../db/dashboard-session-repo.js';
import type { Environment } from '../../domain/environment.js';
import { AppError } from '../../domain/errors.js';
import type { ServiceDeps } from '../deps.js';
import type { SignedIn } from './accounts.js';

/** Sessions ended or expired this many days ago are deleted at the next sign-in. */
const keepEndedDays = 7;

/** The live session a cookie's token hash names, with its person, store and role; null if ended, expired or unknown. */
export function findDashboardSession(deps: Pick<ServiceDeps, 'pool'>, tokenHash: Buffer) {
  return findActiveDashboardSession(deps.pool, tokenHash);
}

/**
 * Signs in: ends the browser's previous session (if any) and stores the new one (its hash only),
 * looking at the person's first store in test mode. A person in no store cannot sign in.
 */
export async function startDashboardSession(
  deps: Pick<ServiceDeps, 'pool'>,
  s: { previousTokenHash?: Buffer; tokenHash: Buffer; signedIn: SignedIn; lifetimeSeconds: number; storeId?: string },
): Promise<{ storeId: string }> {
  const first = s.signedIn.memberships.find((m) => m.storeId === s.storeId) ?? s.signedIn.memberships[0];
  if (!first) {
    throw new AppError('wrong_environment', 'Your account belongs to no store now. Ask a store owner to invite you again.', 'email');
  }
  if (s.previousTokenHash) await revokeDashboardSession(deps.pool, s.previousTokenHash);
  await insertDashboardSession(deps.pool, {
    tokenHash: s.tokenHash, userId: s.signedIn.userId, storeId: first.storeId, environment: 'test', lifetimeSeconds: s.lifetimeSeconds,
  });
  await deleteStaleDashboardSessions(deps.pool, keepEndedDays);
  return { storeId: first.storeId };
}

/** Points the session at another of its person's stores, or the other environment; 404 for a store they are not in. */
export async function switchDashboardSession(deps: Pick<ServiceDeps, 'pool'>, tokenHash: Buffer, to: { storeId: string; environment: Environment }): Promise<void> {
  if (!(await moveDashboardSession(deps.pool, tokenHash, to))) throw new AppError('not_found', 'No such store.', 'storeId');
}

export function endDashboardSession(deps: Pick<ServiceDeps, 'pool'>, tokenHash: Buffer): Promise<boolean> {
  return revokeDashboardSession(deps.pool, tokenHash);
}

/** Ends every session of the person except `keep` (the one asking); answers how many ended. */
export function endUserSessions(deps: Pick<ServiceDeps, 'pool'>, userId: string, keep?: Buffer): Promise<number> {
  return revokeUserSessions(deps.pool, userId, keep);
}
