import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { limitOf } from '../../api/plugins/rate-limit.js';
import { endDashboardSession, startDashboardSession, type KeyOwner } from '../../services/dashboard/sessions.js';
import { ownerOfKey } from '../../services/keys/key-owners.js';
import { parseKeyShape } from '../../domain/api-keys.js';
import { AppError } from '../../domain/errors.js';
import { attempt, formOf, noErrors, type FormErrors } from './forms.js';
import { refuseForgedRequest, sendPage, withAction } from './handlers.js';
import { html } from './html.js';
import { field, formError, notice, plainPage } from './layout.js';
import {
  clearSessionCookie, hashSessionToken, loadSession, newSessionToken, originAllowed, sessionLifetimeSeconds, sessionToken,
  setSessionCookie,
} from './session.js';

/** Sign-in attempts per IP per minute. Keys cannot be guessed; this keeps scripted noise off the database. */
export const loginAttemptsPerMinute = 20;

/** Checks a pasted key with the API's rules and messages; the key itself never appears in one. */
async function ownerOfSecretKey(deps: ApiDeps, key: string): Promise<KeyOwner> {
  const prefix = deps.config.keyPrefix;
  if (key === '') throw new AppError('missing_api_key', `Paste your secret API key (${prefix}_test_… or ${prefix}_live_…).`, 'secretKey');
  const shape = parseKeyShape(prefix, key);
  if (shape?.kind === 'publishable') {
    throw new AppError('wrong_key_kind', 'The dashboard needs a secret key; a publishable key (pk_…) was pasted.', 'secretKey');
  }
  if (!shape) throw new AppError('invalid_api_key', `The API key is not valid. Secret keys start with ${prefix}_test_ or ${prefix}_live_.`, 'secretKey');
  return ownerOfKey(deps, 'secret', key, 'secretKey', { fresh: true });
}

type SignedOutReason = 'signedOut' | 'keyRevoked' | null;

const signedOutNotices: Record<Exclude<SignedOutReason, null>, string> = {
  signedOut: 'You are signed out.',
  keyRevoked: 'The key this session was opened with is revoked, so you are signed out. Sign in with another secret key.',
};

function loginPage(errors: FormErrors, signedOut: SignedOutReason = null): string {
  return plainPage(
    'Sign in',
    html`<div class="card login">
<h1>Malipo dashboard</h1>
<p class="muted">Sign in with your store's secret key. It is checked once and never kept: your browser gets a
session cookie that lasts 12 hours, and the key goes nowhere else.</p>
${signedOut ? notice('ok', signedOutNotices[signedOut]) : ''}
${formError(errors)}
<form method="post" action="/dashboard/login" novalidate>
${field({ name: 'secretKey', label: 'Secret key', type: 'password', secret: true, errors, required: true, placeholder: 'sk_test_…', hint: 'A test key opens the test environment, a live key the live one.' })}
<button type="submit" class="primary">Sign in</button>
</form>
</div>`,
  );
}

export function registerLoginPages(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/login', async (request, reply) => {
    if (await loadSession(deps, request, reply)) return reply.redirect('/dashboard', 303);
    const query = request.query as Record<string, unknown>;
    const signedOut: SignedOutReason = query.keyRevoked === '1' ? 'keyRevoked' : query.signedOut === '1' ? 'signedOut' : null;
    return sendPage(reply, 200, loginPage(noErrors, signedOut));
  });

  const signInLimit = limitOf(app, 'dashboardLogin', loginAttemptsPerMinute);
  app.post('/login', async (request, reply) => {
    try {
      await signInLimit(request, reply);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      reply.headers(err.headers ?? {});
      return sendPage(reply, err.status, loginPage({ form: err.message, fields: {} }));
    }
    // Login CSRF (signing a victim into someone else's store) is stopped by the Origin check.
    if (!originAllowed(deps, request)) return refuseForgedRequest(reply);
    const key = (formOf(request).get('secretKey') ?? '').trim();
    const result = await attempt(() => ownerOfSecretKey(deps, key), ['secretKey']);
    if (!result.ok) return sendPage(reply, result.status, loginPage(result.errors));
    const previous = sessionToken(request);
    const token = newSessionToken();
    const owner = result.value;
    await startDashboardSession(deps, {
      previousTokenHash: previous ? hashSessionToken(previous) : undefined,
      tokenHash: hashSessionToken(token),
      owner,
      lifetimeSeconds: sessionLifetimeSeconds,
    });
    request.log.info({ storeId: owner.storeId, environment: owner.environment, keyId: owner.keyId }, 'dashboard sign-in');
    setSessionCookie(deps, request, reply, token);
    return reply.redirect('/dashboard', 303);
  });

  app.post(
    '/logout',
    withAction(deps, async (session, _form, request, reply) => {
      await endDashboardSession(deps, session.tokenHash);
      clearSessionCookie(deps, request, reply);
      return reply.redirect('/dashboard/login?signedOut=1', 303);
    }),
  );
}
