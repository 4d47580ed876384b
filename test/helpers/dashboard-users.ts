import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { addMember } from '../../db/dashboard-user-repo.js';
import type { CreatedStore } from '../../db/store-repo.js';
import type { Role } from '../../domain/roles.js';
import { createUser } from '../../services/dashboard/accounts.js';
import { httpCall } from './http.js';
import type { Stack } from './stack.js';

/**
 * Dashboard people for tests: a user with a role in a store, and ways to sign them in, in a
 * browser page or over plain HTTP. Tests go through these, never through the sign-in form's
 * fields, so the way a test signs in lives in one place.
 */
export interface DashboardUser {
  email: string;
  password: string;
  userId: string;
  storeId: string;
  role: Role;
}

/** A new person (a fresh email and password) with `role` in `store`. */
export async function dashboardUser(stack: Pick<Stack, 'pool'>, store: Pick<CreatedStore, 'clientId'>, role: Role = 'owner'): Promise<DashboardUser> {
  const email = `${role}-${randomBytes(5).toString('hex')}@example.test`;
  const password = `pw ${randomBytes(9).toString('base64url')}`;
  const { userId } = await createUser(stack, { email, password });
  await addMember(stack.pool, { storeId: store.clientId, userId, role });
  return { email, password, userId, storeId: store.clientId, role };
}

/** Another membership for an existing person. */
export async function addToStore(stack: Pick<Stack, 'pool'>, user: DashboardUser, store: Pick<CreatedStore, 'clientId'>, role: Role): Promise<void> {
  await addMember(stack.pool, { storeId: store.clientId, userId: user.userId, role });
}

/** Signs `user` in on `page`; resolves on the dashboard's first page. */
export async function signInPage(page: Page, baseUrl: string, user: Pick<DashboardUser, 'email' | 'password'>): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/login`);
  await page.fill('#f-email', user.email);
  await page.fill('#f-password', user.password);
  await page.click('button:has-text("Sign in")');
  await page.waitForURL(`${baseUrl}/dashboard`);
}

/** A session over plain HTTP: its cookie (`name=value`) and a CSRF token for its forms. */
export async function signInHttp(
  baseUrl: string,
  user: Pick<DashboardUser, 'email' | 'password'>,
  opts: { localAddress?: string } = {},
): Promise<{ cookie: string; csrf: string }> {
  const res = await httpCall(baseUrl, {
    method: 'POST', url: '/dashboard/login', localAddress: opts.localAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl },
    payload: new URLSearchParams({ email: user.email, password: user.password }).toString(),
  });
  const cookie = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('malipo_dashboard='))?.split(';')[0];
  if (res.status !== 303 || !cookie) throw new Error(`dashboard sign-in: ${res.status}`);
  const page = await httpCall(baseUrl, { method: 'GET', url: '/dashboard', headers: { cookie } });
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '' };
}
