import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/deps.js';
import { parseInput } from '../../api/route.js';
import { createPaymentLinkRoute } from '../../api/routes/payment-links/create.js';
import { listPaymentLinksRoute } from '../../api/routes/payment-links/list.js';
import { createPaymentLink, findPaymentLink, listPaymentLinksWithPayer, type LinkListQuery } from '../../services/payment-links/payment-links.js';
import { availableRailsOf } from '../../services/stores/stores.js';
import { AppError } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import { attempt, noErrors, optionalNumber, optionalText, parseApiBody, type Form, type FormErrors } from './forms.js';
import { can, sendPage, withAction, withSession } from './handlers.js';
import { html, type SafeHtml } from './html.js';
import { dashboardPage, notice } from './layout.js';
import { linksBody, newLinkBody, type LinksView } from './links-view.js';
import { registerLinkDetailPage } from './link-detail.js';
import type { DashboardSession } from './session.js';

const createFields = ['enabledRails', 'usdtAmount', 'mobileMoneyAmount', 'description', 'merchantRef', 'expiresInMinutes', 'redirectUrl', 'metadata'];

/**
 * The metadata textarea as the JSON value the API would receive: text that is not JSON is refused
 * here, with the field named; any JSON goes on to the API's schema (an object, depth, 16 KB).
 */
function metadataOf(form: Form): unknown {
  const raw = optionalText(form, 'metadata');
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new AppError('invalid_field', `Invalid 'metadata': must be a JSON object such as {"orderId": "A-17"} (${(err as Error).message}).`, 'metadata');
  }
}

/** The form as the API's JSON body: the same schema (imported from the route) then checks it. */
function createBody(form: Form): Record<string, unknown> {
  return {
    metadata: metadataOf(form),
    enabledRails: form.getAll('enabledRails'),
    usdtAmount: optionalText(form, 'usdtAmount'),
    mobileMoneyAmount: optionalNumber(form, 'mobileMoneyAmount'),
    description: optionalText(form, 'description'),
    merchantRef: optionalText(form, 'merchantRef'),
    expiresInMinutes: optionalNumber(form, 'expiresInMinutes'),
    redirectUrl: optionalText(form, 'redirectUrl'),
  };
}

interface Listing {
  status?: string;
  merchantRef?: string;
  page?: string;
}

/** The overview: one page of the store's links (the list API's query rules) and the create form. */
async function renderOverview(
  deps: ApiDeps,
  session: DashboardSession,
  listing: Listing,
  form: { values: Record<string, string | string[]>; errors: FormErrors },
  banner: SafeHtml,
  only: 'overview' | 'form' = 'overview',
): Promise<string> {
  const { auth } = session;
  let query: LinkListQuery;
  let listError: string | undefined;
  try {
    query = parseInput(listPaymentLinksRoute.query!, pick(listing), 'query');
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    [query, listError] = [{ page: 1, limit: 20 }, err.message];
  }
  const [page, available] = await Promise.all([listPaymentLinksWithPayer(deps, auth, query), availableRailsOf(deps, auth)]);
  const view: LinksView = {
    links: page.data,
    status: query.status,
    merchantRef: query.merchantRef,
    page: query.page,
    limit: query.limit,
    total: page.total,
    available,
    ...form,
  };
  if (only === 'form') return dashboardPage(session, 'links', 'New payment link', newLinkBody(session, view));
  return dashboardPage(session, 'links', 'Payment links', linksBody(session, view, html`${banner}${notice('error', listError)}`));
}

const pick = (l: Listing) =>
  Object.fromEntries(Object.entries({ status: l.status, merchantRef: l.merchantRef?.trim(), page: l.page }).filter(([, v]) => typeof v === 'string' && v !== ''));

async function createdBanner(deps: ApiDeps, session: DashboardSession, id: unknown): Promise<SafeHtml> {
  if (typeof id !== 'string' || !isId('paymentLink', id)) return html``;
  const link = await findPaymentLink(deps, session.auth, id);
  if (!link) return html``;
  return notice('ok', html`Payment link <strong>${link.id}</strong> created. Send your customer
<a href="${link.checkoutUrl}" target="_blank" rel="noopener" data-testid="created-link">${link.checkoutUrl}</a>
<button type="button" class="copy" data-copy="${link.checkoutUrl}">Copy</button> · <a href="/dashboard/links/${link.id}">details</a>`);
}

/** After sign-up: what to do first, in order. */
function welcomeBanner(): SafeHtml {
  return notice('ok', html`<strong>Welcome to Malipo.</strong> You are in test mode: nothing here moves real money. To take payments,
<a href="/dashboard/mobile-money">connect M-Pesa</a> or <a href="/dashboard/wallets">register your wallets</a>, then create a payment link below.
Your servers need a secret key: <a href="/dashboard/keys">create one</a> (it is shown once).`);
}

export function registerLinksPage(app: FastifyInstance, deps: ApiDeps): void {
  registerLinkDetailPage(app, deps);
  const overview = withSession(deps, async (session, request, reply) => {
    const q = request.query as Record<string, unknown>;
    const one = (name: string) => (typeof q[name] === 'string' ? (q[name] as string) : undefined);
    const listing = { status: one('status'), merchantRef: one('merchantRef'), page: one('page') };
    const banner = q.welcome === '1' ? welcomeBanner() : q.joined === '1' ? notice('ok', `You joined ${session.auth.storeName}.`) : await createdBanner(deps, session, q.created);
    return sendPage(reply, 200, await renderOverview(deps, session, listing, { values: { enabledRails: [] }, errors: noErrors }, banner));
  });
  // The list is the dashboard's first page, and answers at the address its links point under too.
  app.get('/', overview);
  app.get('/links', overview);
  app.get(
    '/links/new',
    withSession(deps, async (session, _request, reply) => {
      if (!can(session, 'developer')) return reply.redirect('/dashboard/links', 303);
      return sendPage(reply, 200, await renderOverview(deps, session, {}, { values: { enabledRails: [] }, errors: noErrors }, html``, 'form'));
    }),
  );

  app.post(
    '/links',
    withAction(deps, async (session, form, _request, reply) => {
      const result = await attempt(async () => {
        const { environment: _never, ...input } = parseApiBody(createPaymentLinkRoute.body!, createBody(form));
        return createPaymentLink(deps, session.auth, input);
      }, createFields);
      // Post/redirect/get: reloading the list never creates a second link.
      if (result.ok) return reply.redirect(`/dashboard?created=${result.value.id}`, 303);
      const values: Record<string, string | string[]> = { enabledRails: form.getAll('enabledRails') };
      for (const name of createFields.slice(1)) values[name] = form.get(name) ?? '';
      // A refused form comes back alone, its errors next to the fields, where the merchant is looking.
      return sendPage(reply, result.status, await renderOverview(deps, session, {}, { values, errors: result.errors }, html``, 'form'));
    }, { role: 'developer' }),
  );
}
