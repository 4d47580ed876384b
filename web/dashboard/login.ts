import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { limitOf } from '../../api/plugins/rate-limit.js';
import { signIn, signUp, type SignedIn } from '../../services/dashboard/accounts.js';
import { passwordRules } from '../../services/dashboard/passwords.js';
import { endDashboardSession, startDashboardSession } from '../../services/dashboard/sessions.js';
import { AppError } from '../../domain/errors.js';
import { attempt, formOf, noErrors, type FormErrors } from './forms.js';
import { refuseForgedRequest, sendPage, withAction } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { field, formError, notice, plainPage } from './layout.js';
import {
  clearSessionCookie, hashSessionToken, loadSession, newSessionToken, originAllowed, sessionLifetimeSeconds, sessionToken,
  setSessionCookie,
} from './session.js';

/** Sign-in and sign-up attempts per IP per minute, through the shared rate-limit store. */
export const loginAttemptsPerMinute = 20;
/** Sign-in attempts per email per minute, from anywhere: a password guesser spread over many IPs still crawls. */
export const loginAttemptsPerEmailPerMinute = 10;

const signInFields = ['email', 'password'];
const signUpFields = ['email', 'password', 'storeName'];

const signedOutNotices = {
  signedOut: 'You are signed out.',
  everywhere: 'You are signed out on every device.',
  passwordChanged: 'Your password is changed. Sign in with the new one.',
} as const;
type SignedOutReason = keyof typeof signedOutNotices;

function signInPage(deps: ApiDeps, errors: FormErrors, values: { email?: string } = {}, banner?: SafeHtml): string {
  return plainPage(
    'Sign in',
    html`<div class="card login">
<h1>Malipo dashboard</h1>
${banner ?? ''}
${formError(errors)}
<form method="post" action="/dashboard/login" novalidate>
${field({ name: 'email', label: 'Email', type: 'email', errors, value: values.email, required: true, autocomplete: 'username' })}
${field({ name: 'password', label: 'Password', type: 'password', secret: true, errors, required: true, autocomplete: 'current-password' })}
<button type="submit" class="primary">Sign in</button>
</form>
${deps.config.dashboardSignup ? html`<p class="muted">New to Malipo? <a href="/dashboard/signup">Create an account and a store</a>.</p>` : ''}
<p class="muted">Your API keys are for your servers; the dashboard never asks for one.</p>
</div>`,
  );
}

function signUpPage(errors: FormErrors, values: { email?: string; storeName?: string } = {}): string {
  return plainPage(
    'Create an account',
    html`<div class="card login">
<h1>Create your Malipo account</h1>
<p class="muted">You become the owner of a new store, in test mode to begin with. Invite your team from the Team page.</p>
${formError(errors)}
<form method="post" action="/dashboard/signup" novalidate>
${field({ name: 'storeName', label: 'Store name', errors, value: values.storeName, required: true, hint: 'Shown to customers on the checkout; you can change it later.' })}
${field({ name: 'email', label: 'Email', type: 'email', errors, value: values.email, required: true, autocomplete: 'username' })}
${field({ name: 'password', label: 'Password', type: 'password', secret: true, errors, required: true, autocomplete: 'new-password', hint: `At least ${passwordRules.min} characters. A few unrelated words work well.` })}
<button type="submit" class="primary">Create account</button>
</form>
<p class="muted">Already have an account? <a href="/dashboard/login">Sign in</a>.</p>
</div>`,
  );
}

/**
 * Answers a refused attempt (rate limit) on the form's own page, and says whether it did. A
 * boolean, never the reply: a Fastify reply is thenable, so awaiting one reads as nothing, and
 * the refused attempt would go on behind its 429.
 */
async function refusedByLimit(check: () => Promise<void>, reply: FastifyReply, page: (errors: FormErrors) => string): Promise<boolean> {
  try {
    await check();
    return false;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    reply.headers(err.headers ?? {});
    sendPage(reply, err.status, page({ form: err.message, fields: {} }));
    return true;
  }
}

/** Opens a session for a person who just proved who they are, replacing the browser's previous one. */
export async function openSession(deps: ApiDeps, request: FastifyRequest, reply: FastifyReply, signedIn: SignedIn, storeId?: string): Promise<void> {
  const previous = sessionToken(request);
  const token = newSessionToken();
  const started = await startDashboardSession(deps, {
    previousTokenHash: previous ? hashSessionToken(previous) : undefined,
    tokenHash: hashSessionToken(token),
    signedIn,
    lifetimeSeconds: sessionLifetimeSeconds,
    storeId,
  });
  request.log.info({ userId: signedIn.userId, storeId: started.storeId }, 'dashboard sign-in');
  setSessionCookie(deps, request, reply, token);
}

const emailOf = (request: FastifyRequest): string => (emailsByRequest.get(request) ?? formOf(request).get('email') ?? '').trim().toLowerCase().slice(0, 254);
const emailsByRequest = new WeakMap<FastifyRequest, string>();

/** The sign-in limits, per IP and per email, shared by every form that checks a password. */
export function loginLimits(app: FastifyInstance) {
  const perIp = limitOf(app, 'dashboardLogin', loginAttemptsPerMinute);
  const byEmail = limitOf(app, 'dashboardLoginEmail', loginAttemptsPerEmailPerMinute, emailOf);
  const perEmail = (request: FastifyRequest, reply: FastifyReply, email?: string) => {
    if (email !== undefined) emailsByRequest.set(request, email);
    return byEmail(request, reply);
  };
  return { perIp, perEmail };
}

export function registerLoginPages(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/login', async (request, reply) => {
    if (await loadSession(deps, request, reply)) return reply.redirect('/dashboard', 303);
    const query = request.query as Record<string, unknown>;
    const reason = Object.keys(signedOutNotices).find((k) => query[k] === '1') as SignedOutReason | undefined;
    return sendPage(reply, 200, signInPage(deps, noErrors, {}, reason ? notice('ok', signedOutNotices[reason]) : undefined));
  });

  const { perIp, perEmail } = loginLimits(app);
  app.post('/login', async (request, reply) => {
    const email = formOf(request).get('email') ?? '';
    // Per email first, so the headers the answer carries are the per-IP ones, set last.
    const refused = await refusedByLimit(async () => {
      await perEmail(request, reply);
      await perIp(request, reply);
    }, reply, (errors) => signInPage(deps, errors, { email }));
    if (refused) return reply;
    // Login CSRF (signing a victim into someone else's store) is stopped by the Origin check.
    if (!originAllowed(deps, request)) return refuseForgedRequest(reply);
    const form = formOf(request);
    const result = await attempt(async () => {
      const signedIn = await signIn(deps, { email, password: form.get('password') ?? '' });
      await openSession(deps, request, reply, signedIn);
    }, signInFields);
    if (!result.ok) return sendPage(reply, result.status, signInPage(deps, result.errors, { email }));
    return reply.redirect('/dashboard', 303);
  });

  app.get('/signup', async (request, reply) => {
    if (!deps.config.dashboardSignup) return sendPage(reply, 404, signUpClosedPage());
    if (await loadSession(deps, request, reply)) return reply.redirect('/dashboard', 303);
    return sendPage(reply, 200, signUpPage(noErrors));
  });

  app.post('/signup', async (request, reply) => {
    if (!deps.config.dashboardSignup) return sendPage(reply, 404, signUpClosedPage());
    const form = formOf(request);
    const values = { email: form.get('email') ?? '', storeName: form.get('storeName') ?? '' };
    const refused = await refusedByLimit(() => perIp(request, reply), reply, (errors) => signUpPage(errors, values));
    if (refused) return reply;
    if (!originAllowed(deps, request)) return refuseForgedRequest(reply);
    const result = await attempt(async () => {
      const signedIn = await signUp(deps, { ...values, password: form.get('password') ?? '' });
      await openSession(deps, request, reply, signedIn);
      return signedIn;
    }, signUpFields);
    if (!result.ok) return sendPage(reply, result.status, signUpPage(result.errors, values));
    request.log.info({ userId: result.value.userId, storeId: result.value.memberships[0]!.storeId }, 'dashboard sign-up');
    return reply.redirect('/dashboard?welcome=1', 303);
  });

  app.post(
    '/logout',
    withAction(deps, async (session, _form, request, reply) => {
      await endDashboardSession(deps, session.tokenHash);
      clearSessionCookie(deps, request, reply);
      return reply.redirect('/dashboard/login?signedOut=1', 303);
    }, { role: 'viewer' }),
  );
}

function signUpClosedPage(): string {
  return plainPage(
    'Sign-up is closed',
    html`<div class="card"><h1>Sign-up is closed</h1>
<p role="alert">This Malipo server does not take new sign-ups. Ask a store owner to invite you, or the operator to create your store.</p>
<p><a href="/dashboard/login">Sign in</a></p></div>`,
  );
}
