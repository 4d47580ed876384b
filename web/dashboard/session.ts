import { createHash, randomBytes } from 'node:crypto';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import type { Role } from '../../domain/roles.js';
import { findDashboardSession } from '../../services/dashboard/sessions.js';

/**
 * The dashboard's sign-in model: a person signs in with an email and a password, and the server
 * hands the browser a random session token in a signed, HttpOnly cookie; the database holds only
 * the token's SHA-256. The session looks at one of the person's stores in one environment, with
 * the person's role there. The cookie and CSRF plugins that read and write it are set up in
 * plugins.ts. See docs/dashboard.md.
 */
export const sessionCookieName = 'malipo_dashboard';
export const sessionLifetimeSeconds = 12 * 3600;

/** The hidden field every state-changing form carries its CSRF token in. */
export const csrfFieldName = 'csrf';

export interface DashboardSession {
  /** The store and environment the session is looking at, as a StoreScope for the services. */
  auth: AuthContext;
  /** The signed-in person. */
  user: { id: string; email: string };
  /** Their role in `auth.storeId`; actions check it with `withAction(…, { role })`. */
  role: Role;
  /** Every store the person belongs to, for the switcher. */
  stores: { storeId: string; storeName: string; role: Role }[];
  tokenHash: Buffer;
  /** A CSRF token for this session, for every form of the page being rendered. */
  csrfToken: string;
  expiresAt: string;
}

export const newSessionToken = (): string => randomBytes(32).toString('base64url');

export const hashSessionToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/** `Secure` whenever the dashboard is served over https, directly or behind a TLS proxy. */
export function isHttps(deps: ApiDeps, request: FastifyRequest): boolean {
  return request.protocol === 'https' || deps.config.publicBaseUrl.startsWith('https:');
}

/** The session cookie's attributes; `secure` is left to each request. */
export const sessionCookieAttributes = { path: '/dashboard', httpOnly: true, sameSite: 'strict', signed: true } as const satisfies CookieSerializeOptions;

export function setSessionCookie(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.setCookie(sessionCookieName, token, { ...sessionCookieAttributes, secure: isHttps(deps, request), maxAge: sessionLifetimeSeconds });
}

export function clearSessionCookie(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookieName, { ...sessionCookieAttributes, secure: isHttps(deps, request) });
}

/**
 * The cookie's token when its signature holds and it has the shape we issue (43 base64url
 * characters), else undefined: a tampered cookie reads as no cookie.
 */
export function sessionToken(request: FastifyRequest): string | undefined {
  const signed = request.cookies[sessionCookieName];
  if (!signed) return undefined;
  const { valid, value } = request.unsignCookie(signed);
  return valid && value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : undefined;
}

export async function loadSession(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply): Promise<DashboardSession | null> {
  const token = sessionToken(request);
  if (!token) return null;
  const tokenHash = hashSessionToken(token);
  const found = await findDashboardSession(deps, tokenHash);
  if (!found) return null;
  const { storeId, storeName, environment, expiresAt } = found;
  // No API key stands behind a dashboard session: keyId stays empty.
  const auth: AuthContext = { kind: 'secret', storeId, storeName, environment, keyId: '' };
  return {
    auth, user: { id: found.userId, email: found.email }, role: found.role, stores: found.stores,
    tokenHash, csrfToken: reply.generateCsrf(), expiresAt,
  };
}

/**
 * A state-changing request must come from one of our own pages: its Origin (or, failing that,
 * its Referer) must be the public base URL's origin or the origin the request was addressed to.
 * A cross-site form cannot forge either header.
 */
export function originAllowed(deps: ApiDeps, request: FastifyRequest): boolean {
  const allowed = new Set([new URL(deps.config.publicBaseUrl).origin]);
  if (request.headers.host) allowed.add(`${request.protocol}://${request.headers.host}`);
  const origin = request.headers.origin;
  // A sandboxed frame or a privacy redirect sends "null": never one of ours.
  if (typeof origin === 'string') return allowed.has(origin);
  const referer = request.headers.referer;
  if (typeof referer !== 'string') return false;
  try {
    return allowed.has(new URL(referer).origin);
  } catch {
    return false;
  }
}
