import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import type { AuthContext } from '../../api/plugins/auth.js';
import { findDashboardSession } from '../../services/dashboard/sessions.js';

/**
 * The dashboard's sign-in model: the merchant pastes a secret key once, the server checks it and
 * hands the browser a random session token in an HttpOnly cookie. The browser never holds the
 * key; the database holds only the token's SHA-256. See docs/dashboard.md.
 */
export const sessionCookieName = 'malipo_dashboard';
export const sessionLifetimeSeconds = 12 * 3600;

export interface DashboardSession {
  /** The same context an API request with the session's secret key would get. */
  auth: AuthContext;
  tokenHash: Buffer;
  /** Per-session token every state-changing form carries in a hidden field. */
  csrfToken: string;
  expiresAt: string;
}

export const newSessionToken = (): string => randomBytes(32).toString('base64url');

export const hashSessionToken = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * Derived from the session token, so it needs no storage and dies with the session. The HMAC is
 * one-way: a token read from the page's HTML tells nothing about the cookie.
 */
export const csrfTokenFor = (token: string): string => createHmac('sha256', token).update('malipo-dashboard-csrf').digest('base64url');

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Secure` whenever the dashboard is served over https, directly or behind a TLS proxy. */
export function isHttps(deps: ApiDeps, request: FastifyRequest): boolean {
  return request.protocol === 'https' || deps.config.publicBaseUrl.startsWith('https:');
}

export function sessionCookie(token: string, secure: boolean): string {
  return `${sessionCookieName}=${token}; Path=/dashboard; Max-Age=${sessionLifetimeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${sessionCookieName}=; Path=/dashboard; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The cookie's token when it has the shape we issue (43 base64url characters), else undefined. */
export function sessionToken(request: FastifyRequest): string | undefined {
  const token = readCookie(request, sessionCookieName);
  return token && /^[A-Za-z0-9_-]{43}$/.test(token) ? token : undefined;
}

export async function loadSession(deps: ApiDeps, request: FastifyRequest): Promise<DashboardSession | null> {
  const token = sessionToken(request);
  if (!token) return null;
  const tokenHash = hashSessionToken(token);
  const found = await findDashboardSession(deps, tokenHash);
  if (!found) return null;
  const { storeId, storeName, environment, keyId, expiresAt } = found;
  return { auth: { kind: 'secret', storeId, storeName, environment, keyId }, tokenHash, csrfToken: csrfTokenFor(token), expiresAt };
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

export function csrfValid(session: DashboardSession, sent: string | null): boolean {
  if (!sent) return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}
