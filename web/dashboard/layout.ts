import { assetUrl } from '../../api/plugins/static.js';
import type { FormErrors } from './forms.js';
import { html, type SafeHtml } from './html.js';
import { roleLabels } from '../../domain/roles.js';
import { csrfFieldName, type DashboardSession } from './session.js';

export type Section = 'links' | 'mobile-money' | 'wallets' | 'webhooks' | 'reconciliation' | 'treasury' | 'keys' | 'team' | 'account' | 'settings';

const sections: { id: Section; href: string; label: string }[] = [
  { id: 'links', href: '/dashboard', label: 'Payment links' },
  { id: 'mobile-money', href: '/dashboard/mobile-money', label: 'Mobile money' },
  { id: 'wallets', href: '/dashboard/wallets', label: 'Wallets' },
  { id: 'webhooks', href: '/dashboard/webhooks', label: 'Webhooks' },
  { id: 'reconciliation', href: '/dashboard/reconciliation', label: 'Reconciliation' },
  { id: 'treasury', href: '/dashboard/treasury', label: 'Treasury' },
  { id: 'keys', href: '/dashboard/keys', label: 'API keys' },
  { id: 'team', href: '/dashboard/team', label: 'Team' },
  { id: 'settings', href: '/dashboard/settings', label: 'Settings' },
];

function document(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Malipo</title>
<link rel="stylesheet" href="${assetUrl('dashboard/dashboard.css')}">
<script src="${assetUrl('dashboard/dashboard.js')}" defer></script>
</head>
<body>
${body}
</body>
</html>`.value;
}

/**
 * Every signed-in page: the store (a switcher when the person has several), the test/live switch
 * and banner, the sections, the account and sign-out. Test mode is marked on every page, in the
 * title too, so a test page is never mistaken for live data.
 */
export function dashboardPage(session: DashboardSession, active: Section, title: string, body: SafeHtml): string {
  const { storeName, environment } = session.auth;
  const live = environment === 'live';
  const here = sections.find((s) => s.id === active)?.href ?? (active === 'account' ? '/dashboard/account' : '/dashboard');
  const other = live ? 'test' : 'live';
  const storeSwitch = session.stores.length > 1
    ? html`<form method="post" action="/dashboard/switch" class="switch">${csrfField(session)}<input type="hidden" name="return" value="${here}">
<label class="visually-hidden" for="switch-store">Store</label>
<select id="switch-store" name="storeId">${session.stores.map(
        (s) => html`<option value="${s.storeId}"${s.storeId === session.auth.storeId ? html` selected` : ''}>${s.storeName}</option>`,
      )}</select><button type="submit" class="link">Switch store</button></form>`
    : html`<span class="store" data-testid="store-name">${storeName}</span>`;
  return document(
    live ? title : `${title} (test mode)`,
    html`<header class="top">
  <div class="brand">Malipo ${storeSwitch}</div>
  <form method="post" action="/dashboard/switch" class="switch env-switch">${csrfField(session)}<input type="hidden" name="return" value="${here}">
<input type="hidden" name="environment" value="${other}">
<button type="submit" class="link" data-testid="switch-environment">Switch to ${other} mode</button></form>
  <nav aria-label="Sections">${sections.map(
    (s) => html`<a href="${s.href}"${s.id === active ? html` aria-current="page"` : ''}>${s.label}</a>`,
  )}</nav>
  <a class="account${active === 'account' ? ' current' : ''}" href="/dashboard/account"${active === 'account' ? html` aria-current="page"` : ''}>${session.user.email}</a>
  <form method="post" action="/dashboard/logout" class="signout">${csrfField(session)}<button type="submit" class="link">Sign out</button></form>
</header>
<div class="env env-${environment}" data-testid="environment" role="note">${
      live
        ? html`<strong>Live mode</strong> · real customers and real money`
        : html`<strong>Test mode</strong> · test data only; no real money moves`
    } · your role: ${roleLabels[session.role]}</div>
<main class="wrap">
<h1>${title}</h1>
${body}
</main>`,
  );
}

/** A page without a session: sign-in, errors. */
export function plainPage(title: string, body: SafeHtml): string {
  return document(title, html`<main class="wrap narrow">${body}</main>`);
}

export const csrfField = (session: DashboardSession): SafeHtml => html`<input type="hidden" name="${csrfFieldName}" value="${session.csrfToken}">`;

export function notice(kind: 'ok' | 'error', message: string | SafeHtml | undefined): SafeHtml {
  if (!message) return html``;
  return kind === 'error'
    ? html`<div class="notice error" role="alert">${message}</div>`
    : html`<div class="notice ok" role="status">${message}</div>`;
}

export interface FieldOptions {
  name: string;
  label: string;
  errors: FormErrors;
  value?: string;
  type?: 'text' | 'password' | 'number' | 'url' | 'email';
  /** The browser's autofill hint (username, current-password, new-password). */
  autocomplete?: string;
  hint?: string;
  placeholder?: string;
  required?: boolean;
  /** Credentials: never filled back in, never remembered by the browser. */
  secret?: boolean;
}

/** A labelled input with its hint and, when the API named it in `param`, the API's message. */
export function field(o: FieldOptions): SafeHtml {
  const error = o.errors.fields[o.name];
  const id = `f-${o.name}`;
  const described = [o.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field">
  <label for="${id}">${o.label}</label>
  <input id="${id}" name="${o.name}" type="${o.type ?? 'text'}"${
    o.autocomplete ? html` autocomplete="${o.autocomplete}"` : o.secret ? html` autocomplete="off"` : ''
  }${o.secret ? html` spellcheck="false"` : ''}${
    o.value !== undefined && !o.secret ? html` value="${o.value}"` : ''
  }${o.placeholder ? html` placeholder="${o.placeholder}"` : ''}${o.required ? html` required` : ''}${
    error ? html` aria-invalid="true"` : ''
  }${described ? html` aria-describedby="${described}"` : ''}>
  ${o.hint ? html`<small id="${id}-hint" class="hint">${o.hint}</small>` : ''}
  ${fieldError(o.errors, o.name)}
</div>`;
}

export function fieldError(errors: FormErrors, name: string): SafeHtml {
  const error = errors.fields[name];
  return error ? html`<p class="field-error" id="f-${name}-error" data-error-for="${name}">${error}</p>` : html``;
}

export const formError = (errors: FormErrors): SafeHtml => notice('error', errors.form);

export function formatTime(iso: string | null): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
