import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { roles, type Role } from '../domain/roles.js';

/** Dashboard people, their store memberships and the invitations that make new ones. */
export interface UserRow {
  id: string;
  email: string;
  passwordHash: string;
}

const userRow = z.object({ id: z.string(), email: z.string(), password_hash: z.string() });
const toUser = (r: z.infer<typeof userRow>): UserRow => ({ id: r.id, email: r.email, passwordHash: r.password_hash });

export async function findUserByEmail(db: CommonQueryMethods, email: string): Promise<UserRow | null> {
  const row = await db.maybeOne(sql.type(userRow)`SELECT id, email, password_hash FROM dashboard_users WHERE email = ${email}`);
  return row ? toUser(row) : null;
}

export async function findUserById(db: CommonQueryMethods, id: string): Promise<UserRow | null> {
  const row = await db.maybeOne(sql.type(userRow)`SELECT id, email, password_hash FROM dashboard_users WHERE id = ${id}`);
  return row ? toUser(row) : null;
}

/** Inserts a person; null when the email is taken (never an exception the caller must parse). */
export async function insertUser(db: CommonQueryMethods, u: { id: string; email: string; passwordHash: string }): Promise<boolean> {
  const result = await db.query(sql.unsafe`
    INSERT INTO dashboard_users (id, email, password_hash) VALUES (${u.id}, ${u.email}, ${u.passwordHash})
    ON CONFLICT (email) DO NOTHING`);
  return result.rowCount > 0;
}

/** A new hash for the same password (stronger parameters) or a new password. */
export async function updatePasswordHash(db: CommonQueryMethods, userId: string, passwordHash: string, changed: boolean): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE dashboard_users SET password_hash = ${passwordHash}
      ${changed ? sql.fragment`, password_changed_at = now()` : sql.fragment``}
    WHERE id = ${userId}`);
}

export interface Membership {
  storeId: string;
  storeName: string;
  role: Role;
}

const membershipRow = z.object({ store_id: z.string(), store_name: z.string(), role: z.enum(roles) });

/** The stores a person belongs to, oldest membership first (the first is where sign-in lands). */
export async function listMemberships(db: CommonQueryMethods, userId: string): Promise<Membership[]> {
  const rows = await db.any(sql.type(membershipRow)`
    SELECT m.store_id, s.name AS store_name, m.role FROM store_members m JOIN stores s ON s.id = m.store_id
    WHERE m.user_id = ${userId} ORDER BY m.created_at, m.store_id`);
  return rows.map((r) => ({ storeId: r.store_id, storeName: r.store_name, role: r.role }));
}

export async function addMember(db: CommonQueryMethods, m: { storeId: string; userId: string; role: Role }): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO store_members (store_id, user_id, role) VALUES (${m.storeId}, ${m.userId}, ${m.role})
    ON CONFLICT (store_id, user_id) DO NOTHING`);
}

export interface MemberRow {
  userId: string;
  email: string;
  role: Role;
  since: string;
}

const memberRow = z.object({ user_id: z.string(), email: z.string(), role: z.enum(roles), since: z.string() });

export async function listMembers(db: CommonQueryMethods, storeId: string): Promise<MemberRow[]> {
  const rows = await db.any(sql.type(memberRow)`
    SELECT m.user_id, u.email, m.role, m.created_at AS since FROM store_members m JOIN dashboard_users u ON u.id = m.user_id
    WHERE m.store_id = ${storeId} ORDER BY m.created_at, u.email`);
  return rows.map((r) => ({ userId: r.user_id, email: r.email, role: r.role, since: r.since }));
}

/**
 * Changes a member's role, or removes them (`role` null), unless that would leave the store with
 * no owner: the owner rows are locked first, so two owners demoting each other at once cannot
 * both succeed. Answers 'ok', 'not_member' or 'last_owner'.
 */
export async function changeMember(pool: DatabasePool, storeId: string, userId: string, role: Role | null): Promise<'ok' | 'not_member' | 'last_owner'> {
  return pool.transaction(async (tx) => {
    const owners = await tx.anyFirst(sql.type(z.object({ user_id: z.string() }))`
      SELECT user_id FROM store_members WHERE store_id = ${storeId} AND role = 'owner' ORDER BY user_id FOR UPDATE`);
    const current = await tx.maybeOneFirst(sql.type(z.object({ role: z.enum(roles) }))`
      SELECT role FROM store_members WHERE store_id = ${storeId} AND user_id = ${userId} FOR UPDATE`);
    if (!current) return 'not_member';
    if (current === 'owner' && role !== 'owner' && owners.length <= 1) return 'last_owner';
    if (role === null) await tx.query(sql.unsafe`DELETE FROM store_members WHERE store_id = ${storeId} AND user_id = ${userId}`);
    else await tx.query(sql.unsafe`UPDATE store_members SET role = ${role} WHERE store_id = ${storeId} AND user_id = ${userId}`);
    return 'ok';
  });
}

export interface InvitationRow {
  storeId: string;
  storeName: string;
  email: string;
  role: Role;
  expiresAt: string;
}

export async function insertInvitation(
  db: CommonQueryMethods,
  i: { tokenHash: Buffer; storeId: string; email: string; role: Role; invitedBy: string; lifetimeSeconds: number },
): Promise<void> {
  await db.query(sql.unsafe`
    INSERT INTO store_invitations (token_hash, store_id, email, role, invited_by, expires_at)
    VALUES (${sql.binary(i.tokenHash)}, ${i.storeId}, ${i.email}, ${i.role}, ${i.invitedBy}, now() + ${i.lifetimeSeconds} * interval '1 second')`);
}

const invitationRow = z.object({ store_id: z.string(), store_name: z.string(), email: z.string(), role: z.enum(roles), expires_at: z.string() });

/** An invitation that can still be accepted. */
export async function findOpenInvitation(db: CommonQueryMethods, tokenHash: Buffer): Promise<InvitationRow | null> {
  const row = await db.maybeOne(sql.type(invitationRow)`
    SELECT i.store_id, s.name AS store_name, i.email, i.role, i.expires_at FROM store_invitations i JOIN stores s ON s.id = i.store_id
    WHERE i.token_hash = ${sql.binary(tokenHash)} AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()`);
  return row ? { storeId: row.store_id, storeName: row.store_name, email: row.email, role: row.role, expiresAt: row.expires_at } : null;
}

/** Marks an invitation used, once: the second of two racing accepts gets false. */
export async function markInvitationAccepted(db: CommonQueryMethods, tokenHash: Buffer): Promise<boolean> {
  const result = await db.query(sql.unsafe`
    UPDATE store_invitations SET accepted_at = now()
    WHERE token_hash = ${sql.binary(tokenHash)} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()`);
  return result.rowCount > 0;
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string;
}

/** Open invitations of a store; `id` is the hex of the first 8 bytes of the token hash, enough to revoke one. */
export async function listPendingInvitations(db: CommonQueryMethods, storeId: string): Promise<PendingInvitation[]> {
  const rows = await db.any(sql.type(z.object({ id: z.string(), email: z.string(), role: z.enum(roles), expires_at: z.string() }))`
    SELECT encode(substring(token_hash FROM 1 FOR 8), 'hex') AS id, email, role, expires_at FROM store_invitations
    WHERE store_id = ${storeId} AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now() ORDER BY created_at`);
  return rows.map((r) => ({ id: r.id, email: r.email, role: r.role, expiresAt: r.expires_at }));
}

export async function revokeInvitation(db: CommonQueryMethods, storeId: string, id: string): Promise<boolean> {
  const result = await db.query(sql.unsafe`
    UPDATE store_invitations SET revoked_at = now()
    WHERE store_id = ${storeId} AND encode(substring(token_hash FROM 1 FOR 8), 'hex') = ${id} AND accepted_at IS NULL AND revoked_at IS NULL`);
  return result.rowCount > 0;
}
