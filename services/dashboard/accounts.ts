import { randomBytes } from 'node:crypto';
import { z } from 'zod/v4';
import { findUserByEmail, findUserById, insertUser, listMemberships, addMember, updatePasswordHash, type Membership } from '../../db/dashboard-user-repo.js';
import { revokeUserSessions } from '../../db/dashboard-session-repo.js';
import { createStore } from '../../db/store-repo.js';
import { AppError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import type { ServiceDeps } from '../deps.js';
import { hashPassword, needsRehash, passwordProblem, verifyPassword } from './passwords.js';

/**
 * Dashboard accounts: a person signs up with an email and a password (and gets a new store, as its
 * owner), signs in, changes the password. Secret API keys never open the dashboard.
 * See docs/dashboard.md.
 */
type Deps = Pick<ServiceDeps, 'pool' | 'config'>;

const emailSchema = z.string().trim().toLowerCase().max(254, 'is too long').pipe(z.email('is not an email address'));

/** The email as stored (trimmed, lower case), or a 400 naming `field`. */
export function normalEmail(value: string, field = 'email'): string {
  if (value.trim() === '') throw new AppError('missing_field', 'Enter your email address.', field);
  const parsed = emailSchema.safeParse(value);
  if (!parsed.success) throw new AppError('invalid_field', `The email address ${parsed.error.issues[0]?.message ?? 'is not valid'}.`, field);
  return parsed.data;
}

/** A new password that meets the rules, or a 400 naming `field`. */
export function newPassword(password: string, email: string, field = 'password'): string {
  const problem = passwordProblem(password, email);
  if (problem) throw new AppError('invalid_field', problem, field);
  return password;
}

const storeNameSchema = z.string().trim().min(1, 'Enter the store name.').max(100, 'Use at most 100 characters.');

export function storeName(value: string, field = 'storeName'): string {
  const parsed = storeNameSchema.safeParse(value);
  if (!parsed.success) throw new AppError(value.trim() === '' ? 'missing_field' : 'invalid_field', parsed.error.issues[0]!.message, field);
  if (/[\u0000-\u001f\u007f]/.test(parsed.data)) throw new AppError('invalid_field', 'The store name cannot hold control characters.', field);
  return parsed.data;
}

export interface SignedIn {
  userId: string;
  email: string;
  memberships: Membership[];
}

/**
 * Creates a person and a store they own, in one transaction: an email already taken changes
 * nothing. The store's API keys are made as `stores:create` makes them and never shown; the
 * owner creates the secret key they will use on the API keys page, where it is revealed once.
 */
export async function signUp(deps: Deps, input: { email: string; password: string; storeName: string }): Promise<SignedIn> {
  const email = normalEmail(input.email);
  const name = storeName(input.storeName);
  const password = newPassword(input.password, email);
  const passwordHash = await hashPassword(password);
  const userId = newId('dashboardUser');
  const storeId = await deps.pool.transaction(async (tx) => {
    if (!(await insertUser(tx, { id: userId, email, passwordHash }))) {
      throw new AppError('invalid_field', 'There is already an account with this email. Sign in instead.', 'email');
    }
    const store = await createStore(tx, name, deps.config.keyPrefix);
    await addMember(tx, { storeId: store.clientId, userId, role: 'owner' });
    return store.clientId;
  });
  return { userId, email, memberships: [{ storeId, storeName: name, role: 'owner' }] };
}

const wrongCredentials = () => new AppError('invalid_api_key', 'The email or password is wrong.', 'password');

/**
 * Checks an email and password. An unknown email costs the same work as a wrong password and gets
 * the same answer, so the form does not tell who has an account. A hash made with weaker
 * parameters than today's is replaced by a new one.
 */
export async function signIn(deps: Deps, input: { email: string; password: string }): Promise<SignedIn> {
  const email = normalEmail(input.email);
  if (input.password === '') throw new AppError('missing_field', 'Enter your password.', 'password');
  const user = await findUserByEmail(deps.pool, email);
  if (!(await verifyPassword(user?.passwordHash, input.password)) || !user) throw wrongCredentials();
  if (needsRehash(user.passwordHash)) await updatePasswordHash(deps.pool, user.id, await hashPassword(input.password), false);
  return { userId: user.id, email: user.email, memberships: await listMemberships(deps.pool, user.id) };
}

/** Makes a person with a password, or finds them: for `stores:create --owner-email` and invitations. */
export async function createUser(deps: Pick<ServiceDeps, 'pool'>, input: { email: string; password: string }): Promise<{ userId: string; email: string }> {
  const email = normalEmail(input.email);
  const passwordHash = await hashPassword(newPassword(input.password, email));
  const userId = newId('dashboardUser');
  if (!(await insertUser(deps.pool, { id: userId, email, passwordHash }))) {
    throw new AppError('invalid_field', 'There is already an account with this email. Sign in instead.', 'email');
  }
  return { userId, email };
}

/**
 * A new password, after the current one is checked. In the same transaction every other session
 * of the person ends (all but `keep`, the one asking): a crash between the two can never leave a
 * stolen session alive under the new password. Answers how many sessions ended.
 */
export async function changePassword(
  deps: Pick<ServiceDeps, 'pool'>,
  userId: string,
  input: { current: string; next: string },
  keep: Buffer,
): Promise<number> {
  const user = await findUserById(deps.pool, userId);
  if (!user) throw new AppError('not_found', 'No such account.');
  if (!(await verifyPassword(user.passwordHash, input.current))) throw new AppError('invalid_field', 'The current password is wrong.', 'currentPassword');
  if (input.next === input.current) throw new AppError('invalid_field', 'The new password is the same as the current one.', 'newPassword');
  newPassword(input.next, user.email, 'newPassword');
  const hash = await hashPassword(input.next);
  return deps.pool.transaction(async (tx) => {
    await updatePasswordHash(tx, user.id, hash, true);
    return revokeUserSessions(tx, user.id, keep);
  });
}

export { listMemberships };

/**
 * Makes `email` an owner of a store, for automation (`stores:create --owner-email`, the demo): an
 * existing person gets the membership; a new one gets an account with a generated password,
 * returned once for the caller to hand over (it is stored only as its hash).
 */
export async function addStoreOwner(deps: Pick<ServiceDeps, 'pool'>, storeId: string, ownerEmail: string): Promise<{ email: string; password?: string }> {
  const email = normalEmail(ownerEmail, 'owner-email');
  const existing = await findUserByEmail(deps.pool, email);
  if (existing) {
    await addMember(deps.pool, { storeId, userId: existing.id, role: 'owner' });
    return { email };
  }
  const password = generatedPassword();
  const { userId } = await createUser(deps, { email, password });
  await addMember(deps.pool, { storeId, userId, role: 'owner' });
  return { email, password };
}

/** 20 characters from a 56-letter alphabet without look-alikes: about 116 bits. */
function generatedPassword(): string {
  const alphabet = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  let out = '';
  for (const byte of randomBytes(40)) {
    if (byte < alphabet.length * 4) out += alphabet[byte % alphabet.length];
    if (out.length === 20) break;
  }
  return out.length === 20 ? out : generatedPassword();
}
