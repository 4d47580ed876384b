import fastifyCookie from '@fastify/cookie';
import fastifyCsrfProtection from '@fastify/csrf-protection';
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { dashboardCookieKeys } from '../../services/dashboard/cookie-keys.js';
import { formOf } from './forms.js';
import { csrfFieldName, sessionCookieAttributes, sessionCookieName } from './session.js';

/**
 * The cookie and CSRF plugins, registered in the dashboard's own scope: the JSON API neither
 * parses nor sets cookies.
 *
 * `@fastify/cookie` signs the session cookie with a key derived from the keyring, so a cookie
 * edited or signed elsewhere is refused before the database is asked. `@fastify/csrf-protection`
 * keeps its secret in a cookie; that cookie is the session cookie itself, so the secret is the
 * session token. A token is then a salted HMAC of the session token: it needs no second cookie
 * and no storage, dies with the session, and tells nothing about the cookie.
 */
export async function registerCookiePlugins(scope: FastifyInstance, deps: ApiDeps): Promise<void> {
  const keys = await dashboardCookieKeys(deps.config);
  await scope.register(fastifyCookie, { secret: keys.cookieSecrets });
  await scope.register(fastifyCsrfProtection, {
    cookieKey: sessionCookieName,
    // Used only if a token were made without a session, which handlers.ts never does.
    cookieOpts: sessionCookieAttributes,
    csrfOpts: { hmacKey: keys.csrfHmacKey },
    // Only the form's hidden field counts: not a header, not a JSON body.
    getToken: (request) => formOf(request).get(csrfFieldName) ?? undefined,
  });
}
