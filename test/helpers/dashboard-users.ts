import type { Page } from 'playwright-core';
import type { CreatedStore } from '../../db/store-repo.js';
import type { Role } from '../../domain/roles.js';
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
  storeId: string;
  role: Role;
  /** TRANSITIONAL: the store's test secret key, until accounts land. */
  secretKey: string;
}

export async function dashboardUser(_stack: Stack, store: CreatedStore, role: Role = 'owner'): Promise<DashboardUser> {
  return { email: '', password: '', storeId: store.clientId, role, secretKey: store.keys.test.secretKey };
}

/** Signs `user` in on `page`; resolves on the dashboard's first page. */
export async function signInPage(page: Page, baseUrl: string, user: DashboardUser): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/login`);
  await page.fill('#f-secretKey', user.secretKey);
  await page.click('button:has-text("Sign in")');
  await page.waitForURL(`${baseUrl}/dashboard`);
}

/** A session over plain HTTP: its cookie (`name=value`) and a CSRF token for its forms. */
export async function signInHttp(baseUrl: string, user: DashboardUser, opts: { localAddress?: string } = {}): Promise<{ cookie: string; csrf: string }> {
  const res = await httpCall(baseUrl, {
    method: 'POST', url: '/dashboard/login', localAddress: opts.localAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl },
    payload: new URLSearchParams({ secretKey: user.secretKey }).toString(),
  });
  const cookie = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('malipo_dashboard='))?.split(';')[0];
  if (res.status !== 303 || !cookie) throw new Error(`dashboard sign-in: ${res.status}`);
  const page = await httpCall(baseUrl, { method: 'GET', url: '/dashboard', headers: { cookie } });
  return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '' };
}
