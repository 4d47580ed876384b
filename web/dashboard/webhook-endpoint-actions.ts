import type { EndpointDto } from '../../services/webhooks/dto.js';
import { randomToken } from '../../domain/ids.js';
import { html, type SafeHtml } from './html.js';
import { csrfField } from './layout.js';
import type { DashboardSession } from './session.js';

/**
 * The actions on one endpoint, as buttons: enable (when disabled), send a test event (when
 * enabled), roll the secret, delete. Each form posts to the same service as its API route.
 * `from` tells the action which page to come back to.
 */
export function endpointActions(session: DashboardSession, e: EndpointDto, opts: { roll?: boolean; remove?: boolean; from?: 'log' }): SafeHtml {
  const from = opts.from ? html`<input type="hidden" name="from" value="${opts.from}">` : '';
  const enable = e.status === 'disabled'
    ? html`<form method="post" action="/dashboard/webhooks/${e.id}/enable">${csrfField(session)}${from}<button type="submit" class="primary">Enable</button></form>`
    : html``;
  // The nonce makes the form's event id: sending this form twice sends one event.
  const test = e.status === 'enabled'
    ? html`<form method="post" action="/dashboard/webhooks/${e.id}/test">${csrfField(session)}<input type="hidden" name="nonce" value="${randomToken(24)}"><button type="submit" class="copy">Send test event</button></form>`
    : html``;
  const roll = opts.roll
    ? html`<form method="post" action="/dashboard/webhooks/${e.id}/roll-secret" data-confirm="Issue a new signing secret for ${e.url}? The old one keeps signing for 24 hours next to it.">${csrfField(session)}<button type="submit" class="copy">Roll secret</button></form>`
    : html``;
  const remove = opts.remove
    ? html`<form method="post" action="/dashboard/webhooks/${e.id}/delete" data-confirm="Delete the endpoint ${e.url}? Nothing more is sent to it, and its delivery log goes with it.">${csrfField(session)}<button type="submit" class="danger">Delete</button></form>`
    : html``;
  return html`<div class="actions">${enable}${test}${roll}${remove}</div>`;
}
