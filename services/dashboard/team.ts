import { createHash, randomBytes } from 'node:crypto';
import {
  addMember, changeMember, findOpenInvitation, findUserByEmail, insertInvitation, insertUser, listMembers, listPendingInvitations, markInvitationAccepted,
  revokeInvitation, type InvitationRow, type MemberRow, type PendingInvitation,
} from '../../db/dashboard-user-repo.js';
import { AppError, notFound } from '../../domain/errors.js';
import { isRole, type Role } from '../../domain/roles.js';
import type { ServiceDeps } from '../deps.js';
import { isId, newId } from '../../domain/ids.js';
import { newPassword, normalEmail } from './accounts.js';
import { hashPassword } from './passwords.js';

/**
 * A store's team: members with roles, and invitations. An owner invites a colleague by email and
 * gets a link to pass on (Malipo sends no email); the link's token is kept only as its SHA-256,
 * lasts 7 days and works once. Changes that would leave a store with no owner are refused.
 */
type Deps = Pick<ServiceDeps, 'pool'>;

export const invitationLifetimeSeconds = 7 * 24 * 3600;

export const hashInvitationToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** The shape we issue: 43 base64url characters. Anything else is no invitation, and never reaches the database. */
export const isInvitationToken = (token: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(token);

export interface Team {
  members: MemberRow[];
  invitations: PendingInvitation[];
}

export async function teamOf(deps: Deps, storeId: string): Promise<Team> {
  const [members, invitations] = await Promise.all([listMembers(deps.pool, storeId), listPendingInvitations(deps.pool, storeId)]);
  return { members, invitations };
}

function roleOf(value: string, field: string): Role {
  if (!isRole(value)) throw new AppError('invalid_field', 'Choose a role: owner, developer or viewer.', field);
  return value;
}

/** A new invitation; answers its token, shown to the owner once. A person already in the store is refused. */
export async function inviteMember(deps: Deps, storeId: string, invitedBy: string, input: { email: string; role: string }): Promise<{ token: string; email: string; role: Role }> {
  const email = normalEmail(input.email);
  const role = roleOf(input.role, 'role');
  const existing = await findUserByEmail(deps.pool, email);
  if (existing && (await listMembers(deps.pool, storeId)).some((m) => m.userId === existing.id)) {
    throw new AppError('invalid_field', 'This person is already a member of the store.', 'email');
  }
  const token = randomBytes(32).toString('base64url');
  await insertInvitation(deps.pool, { tokenHash: hashInvitationToken(token), storeId, email, role, invitedBy, lifetimeSeconds: invitationLifetimeSeconds });
  return { token, email, role };
}

export async function cancelInvitation(deps: Deps, storeId: string, id: string): Promise<void> {
  if (!/^[0-9a-f]{16}$/.test(id) || !(await revokeInvitation(deps.pool, storeId, id))) throw notFound('invitation');
}

const lastOwner = () => new AppError('invalid_state', 'A store needs at least one owner: make someone else an owner first.', 'role');

/** A string that is no person's id names no member, and is never sent to the database (it may hold a NUL). */
const memberId = (userId: string): string => {
  if (!isId('dashboardUser', userId)) throw notFound('member');
  return userId;
};

export async function changeMemberRole(deps: Deps, storeId: string, userId: string, role: string): Promise<void> {
  memberId(userId);
  const outcome = await changeMember(deps.pool, storeId, userId, roleOf(role, 'role'));
  if (outcome === 'not_member') throw notFound('member');
  if (outcome === 'last_owner') throw lastOwner();
}

export async function removeMember(deps: Deps, storeId: string, userId: string): Promise<void> {
  memberId(userId);
  const outcome = await changeMember(deps.pool, storeId, userId, null);
  if (outcome === 'not_member') throw notFound('member');
  if (outcome === 'last_owner') throw lastOwner();
}

const spentInvitation = () =>
  new AppError('not_found', 'This invitation is not valid any more: it was used, withdrawn or is older than 7 days. Ask for a new one.');

/** Whether the invited email already has an account (the invitation page then asks for its password). */
export async function invitedAccountExists(deps: Deps, email: string): Promise<boolean> {
  return (await findUserByEmail(deps.pool, email)) !== null;
}

/** The open invitation a token names, or a 404 (unknown, used, revoked or expired alike). */
export async function openInvitation(deps: Deps, token: string): Promise<InvitationRow> {
  const found = isInvitationToken(token) ? await findOpenInvitation(deps.pool, hashInvitationToken(token)) : null;
  if (!found) throw spentInvitation();
  return found;
}

/**
 * Accepts an invitation as the signed-in person (whose email must be the invited one), or, with
 * `newPassword`, creates the invited account first. The token is spent once, in the same
 * transaction as the membership, so two racing accepts make one membership.
 */
export async function acceptInvitation(
  deps: Deps,
  token: string,
  as: { userId: string; email: string } | { newPassword: string },
): Promise<{ userId: string; storeId: string }> {
  const invitation = await openInvitation(deps, token);
  let newUser: { id: string; passwordHash: string } | undefined;
  if ('newPassword' in as) {
    if (await findUserByEmail(deps.pool, invitation.email)) {
      throw new AppError('invalid_field', `There is already an account for ${invitation.email}: sign in with it to accept.`, 'password');
    }
    newUser = { id: newId('dashboardUser'), passwordHash: await hashPassword(newPassword(as.newPassword, invitation.email)) };
  } else if (as.email !== invitation.email) {
    throw new AppError('wrong_environment', `This invitation is for ${invitation.email}; you are signed in as ${as.email}.`);
  }
  const userId = newUser?.id ?? (as as { userId: string }).userId;
  await deps.pool.transaction(async (tx) => {
    if (!(await markInvitationAccepted(tx, hashInvitationToken(token)))) throw spentInvitation();
    if (newUser && !(await insertUser(tx, { id: newUser.id, email: invitation.email, passwordHash: newUser.passwordHash }))) {
      throw new AppError('invalid_field', `There is already an account for ${invitation.email}: sign in with it to accept.`, 'password');
    }
    await addMember(tx, { storeId: invitation.storeId, userId, role: invitation.role });
  });
  return { userId, storeId: invitation.storeId };
}
