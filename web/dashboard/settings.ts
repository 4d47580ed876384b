import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { updateStoreSettingsBody } from '../../api/routes/store-settings/routes.js';
import { maxLogoBytes, removeStoreLogo, setStoreLogo } from '../../services/stores/logo.js';
import { getStoreSettings, updateStoreSettings, type StoreSettings } from '../../services/stores/settings.js';
import { attempt, noErrors, optionalNumber, optionalText, parseApiBody, type Form, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { csrfField, dashboardPage, field, fieldError, formError, notice } from './layout.js';
import type { DashboardSession } from './session.js';
import { acceptUploads, uploadOf } from './uploads.js';

/**
 * Store settings (owner only): the payment policy and the default redirect URL of the session's
 * environment, the store's name and its checkout logo. The form is checked by the body schema of
 * `PUT /v1/merchant/clients/:clientId/settings` and saved by the same `updateStoreSettings`, all
 * or nothing; the logo goes through `setStoreLogo`, which checks what the bytes are.
 */
const settingsFields = ['storeName', 'defaultRedirectUrl', 'lateWatchMinutes', 'underpaymentToleranceBps'];

interface PageState {
  banner?: SafeHtml;
  settingsErrors?: FormErrors;
  /** What the refused form held, shown again so the merchant can correct it. */
  echo?: Record<string, string>;
  logoErrors?: FormErrors;
}

function settingsForm(session: DashboardSession, s: StoreSettings, errors: FormErrors, echo: Record<string, string> | undefined): SafeHtml {
  const value = (name: string, saved: string | number | null) => echo?.[name] ?? (saved === null ? '' : String(saved));
  const env = session.auth.environment === 'live' ? 'live' : 'test';
  return html`<section class="card" aria-labelledby="settings-title"><h2 id="settings-title">Store and payment policy</h2>
${formError(errors)}
<form method="post" action="/dashboard/settings" novalidate>
${csrfField(session)}
${field({ name: 'storeName', label: 'Store name', value: value('storeName', s.storeName), errors, required: true, hint: 'Customers see it on the checkout, in every mode; 1 to 200 characters' })}
${field({ name: 'defaultRedirectUrl', label: `Default redirect URL (${env} mode)`, type: 'url', value: value('defaultRedirectUrl', s.defaultRedirectUrl), errors, placeholder: 'https://shop.example.com/thanks', hint: 'Where the checkout sends customers back when a link was created without redirectUrl: https, on a public host. Empty for none.' })}
${field({ name: 'lateWatchMinutes', label: `Late-payment window, minutes (${env} mode)`, type: 'number', value: value('lateWatchMinutes', s.lateWatchMinutes), errors, required: true, hint: 'How long after a link expires a payment is still caught and credited: 0 to 43200 (30 days)' })}
${field({ name: 'underpaymentToleranceBps', label: `Underpayment tolerance, basis points (${env} mode)`, type: 'number', value: value('underpaymentToleranceBps', s.underpaymentToleranceBps), errors, required: true, hint: 'A shortfall up to this counts as paid: 100 = 1 %, at most 1000 (10 %)' })}
<p class="muted">Changes apply to links created from now on; open links keep what they started with.</p>
<button type="submit" class="primary">Save settings</button>
</form></section>`;
}

function logoForm(session: DashboardSession, s: StoreSettings, errors: FormErrors): SafeHtml {
  return html`<section class="card" aria-labelledby="logo-title"><h2 id="logo-title">Checkout logo</h2>
${s.logoUrl ? html`<p class="logo-preview"><img src="${s.logoUrl}" alt="The store's logo" data-testid="current-logo"></p>` : html`<p class="empty">No logo: the checkout shows the store name alone.</p>`}
${formError(errors)}
<form method="post" action="/dashboard/settings/logo" enctype="multipart/form-data" novalidate>
${csrfField(session)}
<div class="field"><label for="f-logo">${s.logoUrl ? 'Replace the logo' : 'Upload a logo'}</label>
<input id="f-logo" name="logo" type="file" accept="image/png,image/jpeg,image/webp"${errors.fields.logo ? html` aria-invalid="true" aria-describedby="f-logo-hint f-logo-error"` : html` aria-describedby="f-logo-hint"`}>
<small id="f-logo-hint" class="hint">PNG, JPEG or WebP, at most ${maxLogoBytes / 1024} KB (SVG is refused: it can carry script). Shown on every checkout page, in every mode.</small>
${fieldError(errors, 'logo')}</div>
<button type="submit" class="primary">Upload logo</button>
</form>
${s.logoUrl
    ? html`<form method="post" action="/dashboard/settings/logo/remove" class="inline" data-confirm="Remove the logo from the checkout?">${csrfField(session)}<button type="submit" class="danger">Remove logo</button></form>`
    : ''}
</section>`;
}

/** What a viewer or developer sees: the values, no forms. */
function readOnly(session: DashboardSession, s: StoreSettings): SafeHtml {
  return html`<section class="card"><h2>Store and payment policy</h2>
<dl class="facts" data-testid="settings-facts"><dt>Store name</dt><dd>${s.storeName}</dd>
<dt>Default redirect URL</dt><dd>${s.defaultRedirectUrl ?? '—'}</dd>
<dt>Late-payment window</dt><dd>${s.lateWatchMinutes} minutes</dd>
<dt>Underpayment tolerance</dt><dd>${s.underpaymentToleranceBps} basis points</dd>
<dt>Logo</dt><dd>${s.logoUrl ? html`<img class="logo-small" src="${s.logoUrl}" alt="The store's logo">` : '—'}</dd></dl>
<p class="muted">Only an owner of the store changes these (${session.auth.environment} mode shown).</p></section>`;
}

async function render(deps: ApiDeps, session: DashboardSession, state: PageState = {}): Promise<string> {
  const s = await getStoreSettings(deps, session.auth, session.auth.storeId);
  const body = can(session, 'owner')
    ? html`${state.banner ?? ''}${settingsForm(session, s, state.settingsErrors ?? noErrors, state.echo)}${logoForm(session, s, state.logoErrors ?? noErrors)}`
    : html`${state.banner ?? ''}${readOnly(session, s)}`;
  return dashboardPage(session, 'settings', 'Settings', body);
}

function bannerFor(query: Record<string, unknown>): SafeHtml {
  if (query.saved === '1') return notice('ok', 'Settings saved. Links created from now on use them.');
  if (query.logo === 'set') return notice('ok', 'Logo saved: the checkout shows it now.');
  if (query.logo === 'removed') return notice('ok', 'Logo removed.');
  return html``;
}

/** The form as the API's JSON body: an empty redirect URL clears it, numbers as JSON would carry them. */
function bodyOf(form: Form): Record<string, unknown> {
  const redirect = form.get('defaultRedirectUrl');
  return {
    storeName: form.get('storeName') ?? undefined,
    defaultRedirectUrl: redirect === null ? undefined : redirect.trim() === '' ? null : redirect.trim(),
    lateWatchMinutes: optionalNumber(form, 'lateWatchMinutes'),
    underpaymentToleranceBps: optionalNumber(form, 'underpaymentToleranceBps'),
  };
}

export function registerSettingsPage(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/settings',
    withSession(deps, async (session, request, reply) => sendPage(reply, 200, await render(deps, session, { banner: bannerFor(request.query as Record<string, unknown>) }))),
  );

  app.post(
    '/settings',
    withAction(deps, async (session, form, request, reply) => {
      const result = await attempt(() => {
        const body = parseApiBody(updateStoreSettingsBody, bodyOf(form));
        return updateStoreSettings(deps, session.auth, session.auth.storeId, body);
      }, settingsFields);
      if (result.ok) {
        request.log.info({ storeId: session.auth.storeId, environment: session.auth.environment, by: session.user.id }, 'store settings saved (dashboard)');
        return reply.redirect('/dashboard/settings?saved=1', 303);
      }
      const echo = Object.fromEntries(settingsFields.map((f) => [f, form.get(f) ?? '']));
      return sendPage(reply, result.status, await render(deps, session, { settingsErrors: result.errors, echo }));
    }, { role: 'owner' }),
  );

  app.post(
    '/settings/logo/remove',
    withAction(deps, async (session, _form, request, reply) => {
      await removeStoreLogo(deps, session.auth);
      request.log.info({ storeId: session.auth.storeId, by: session.user.id }, 'store logo removed (dashboard)');
      return reply.redirect('/dashboard/settings?logo=removed', 303);
    }, { role: 'owner' }),
  );

  // The one multipart form, in a scope of its own: nowhere else does the dashboard take a file.
  app.register(async (uploadScope) => {
    acceptUploads(uploadScope, { field: 'logo', maxFileBytes: maxLogoBytes, maxRequestBytes: maxLogoBytes * 2 + 16 * 1024 });
    uploadScope.post(
      '/settings/logo',
      withAction(deps, async (session, _form, request, reply) => {
        const result = await attempt(() => setStoreLogo(deps, session.auth, uploadOf(request)), ['logo']);
        if (!result.ok) return sendPage(reply, result.status, await render(deps, session, { logoErrors: result.errors }));
        request.log.info({ storeId: session.auth.storeId, sha256: result.value.sha256, by: session.user.id }, 'store logo saved (dashboard)');
        return reply.redirect('/dashboard/settings?logo=set', 303);
      }, { role: 'owner' }),
    );
  });
}
