import { findLink, findLinkWithPayments, listLinks, type LinkRow } from '../../db/payment-link-repo.js';
import { findCreationContext } from '../../db/store-repo.js';
import { AppError, notFound } from '../../domain/errors.js';
import { kesToUsdtMicro, parseUsdt, usdtToKes } from '../../domain/money.js';
import type { RailId } from '../../domain/rails.js';
import type { LinkStatus } from '../../domain/states.js';
import type { Client } from '@temporalio/client';
import { cancelPaymentLink, simulateLinkPayment, updateFailureToAppError, type LinkUpdate } from '../../temporal-client/index.js';
import { paymentLinkDetailDto, paymentLinkDto } from './dto.js';
import type { ServiceDeps } from '../deps.js';
import type { StoreScope } from '../scope.js';
import { freshIds, type RequestIds } from '../request-ids.js';
import { assertRailsAvailable, ensureRequestStarted, openPaymentRequest, resumePaymentRequest } from './payment-requests.js';
import { amountUnitOf } from '../../rails/methods.js';

export interface CreateLinkInput {
  usdtAmount?: string;
  mobileMoneyAmount?: number;
  enabledRails: RailId[];
  description?: string;
  merchantRef?: string;
  metadata?: Record<string, unknown>;
  expiresInMinutes: number;
  redirectUrl?: string;
}


/** Amounts of a new link: USDT due, KES shown, and the rate that links them (locked for the link's life). */
async function resolveAmounts(deps: ServiceDeps, auth: StoreScope, input: CreateLinkInput) {
  const mobile = input.enabledRails.some((r) => amountUnitOf(r) === 'KES');
  const mobileOnly = mobile && input.enabledRails.length === 1;
  if (input.usdtAmount === undefined && !mobileOnly) {
    throw new AppError('missing_field', "Missing required field 'usdtAmount': it is required unless MOBILE_MONEY is the only rail.", 'usdtAmount');
  }
  if (input.usdtAmount === undefined && input.mobileMoneyAmount === undefined) {
    throw new AppError('missing_field', "A mobile-money-only link needs 'mobileMoneyAmount' (KES) or 'usdtAmount'.", 'mobileMoneyAmount');
  }
  const needsRate = mobile && (input.mobileMoneyAmount === undefined || input.usdtAmount === undefined);
  // With both amounts given the merchant fixed the KES amount: the rate is only shown, so a live
  // rate that cannot be trusted right now leaves it out instead of refusing the link.
  const rate = !mobile ? null : needsRate ? await deps.rates.kesPerUsdt(auth.environment) : await deps.rates.kesPerUsdt(auth.environment).catch(unlessRateUnavailable);
  const usdtMicro = input.usdtAmount !== undefined ? parseUsdt(input.usdtAmount) : kesToUsdtMicro(input.mobileMoneyAmount!, rate!.kesPerUsdt);
  let kes: number | null = null;
  if (mobile) {
    kes = input.mobileMoneyAmount ?? usdtToKes(usdtMicro, rate!.kesPerUsdt);
    if (kes > 250_000) {
      throw new AppError('invalid_field', `The KES amount ${kes} is above M-Pesa's limit of 250000 per transaction.`, input.mobileMoneyAmount === undefined ? 'usdtAmount' : 'mobileMoneyAmount');
    }
  }
  return { usdtMicro, kes, rate };
}

function unlessRateUnavailable(err: unknown): null {
  if (err instanceof AppError && err.code === 'rate_unavailable') return null;
  throw err;
}

/**
 * Creates a payment link: checks rail availability, fixes amounts, and opens the payment request
 * (addresses, read model, workflow; see payment-requests.ts). Its id comes from `ids`, so that a
 * retry under the same Idempotency-Key completes the same link (api/plugins/idempotency.ts).
 */
export async function createPaymentLink(deps: ServiceDeps, auth: StoreScope, input: CreateLinkInput, ids: RequestIds = freshIds) {
  const id = await ids.idFor('paymentLink');
  // A retry of an Idempotency-Key whose first attempt died after writing the link completes that link.
  const resumed = ids.fresh ? null : await resumePaymentRequest(deps, auth, id);
  if (resumed) return paymentLinkDto(resumed, deps.config);
  const store = await findCreationContext(deps.pool, auth.storeId, auth.environment);
  assertRailsAvailable(auth, input.enabledRails, 'enabledRails', store.connections);
  const { usdtMicro, kes, rate } = await resolveAmounts(deps, auth, input);
  const row = await openPaymentRequest(deps, auth, {
    kind: 'payment_link',
    id,
    rails: input.enabledRails,
    usdtMicro,
    kes,
    rate,
    description: input.description ?? null,
    merchantRef: input.merchantRef ?? null,
    metadata: input.metadata ?? null,
    // Without one of its own, a link takes the store's default for its environment (the settings page).
    redirectUrl: input.redirectUrl ?? store.defaultRedirectUrl,
    expiresInMinutes: input.expiresInMinutes,
    correlationId: ids.correlationId,
  }, store);
  return paymentLinkDto(row, deps.config);
}

export async function getPaymentLink(deps: ServiceDeps, auth: StoreScope, id: string) {
  const found = await findLinkWithPayments(deps.pool, auth.storeId, auth.environment, id);
  if (!found) throw notFound('payment link');
  return paymentLinkDetailDto(found.row, found.payments, deps.config);
}

export interface LinkListQuery {
  status?: LinkStatus;
  /** Only links whose merchantRef is exactly this. */
  merchantRef?: string;
  page: number;
  limit: number;
}

/** One page of the store's links, newest first. */
export async function listPaymentLinks(deps: ServiceDeps, scope: StoreScope, query: LinkListQuery) {
  const { rows, total } = await listLinks(deps.pool, { storeId: scope.storeId, environment: scope.environment, ...query });
  return {
    data: rows.map((r) => paymentLinkDto(r, deps.config)),
    page: query.page,
    limit: query.limit,
    total,
    hasMore: query.page * query.limit < total,
  };
}

/**
 * The list as the dashboard shows it: each link's list record plus the rail that paid it and the
 * payer (the API's list leaves those to the single-link fetch; the dashboard names the paying
 * method in its rows).
 */
export async function listPaymentLinksWithPayer(deps: ServiceDeps, scope: StoreScope, query: LinkListQuery) {
  const { rows, total } = await listLinks(deps.pool, { storeId: scope.storeId, environment: scope.environment, ...query });
  return {
    data: rows.map((r) => Object.assign(paymentLinkDto(r, deps.config), { confirmedRail: r.confirmed_rail, payer: r.payer })),
    total,
  };
}

/** A link of the store as the list shows it, or null. */
export async function findPaymentLink(deps: ServiceDeps, scope: StoreScope, id: string) {
  const row = await findLink(deps.pool, scope.storeId, scope.environment, id);
  return row ? paymentLinkDto(row, deps.config) : null;
}

export async function requireLink(deps: ServiceDeps, auth: StoreScope, id: string): Promise<LinkRow> {
  const row = await findLink(deps.pool, auth.storeId, auth.environment, id);
  if (!row) throw notFound('payment link');
  return row;
}

/**
 * Runs an update on the link's workflow after checking in the read model that the link belongs
 * to the caller's store (another store's link is a 404, never a 409).
 */
export async function executeLinkUpdate<Ret>(
  deps: ServiceDeps,
  auth: StoreScope,
  linkId: string,
  update: LinkUpdate,
  run: (client: Client) => Promise<Ret>,
): Promise<Ret> {
  await ensureRequestStarted(deps, await requireLink(deps, auth, linkId));
  try {
    return await run(deps.temporal);
  } catch (err) {
    const mapped = updateFailureToAppError(update, err);
    if (mapped) throw mapped;
    deps.logger?.error({ err, linkId }, 'payment-link update failed');
    throw new AppError('upstream_failed', 'The payment engine could not complete the request; nothing was charged. Retry shortly.');
  }
}

/** Cancels a PENDING link of the store through its workflow (409 otherwise); the link as it is now. */
export async function cancelStoreLink(deps: ServiceDeps, auth: StoreScope, id: string) {
  await executeLinkUpdate(deps, auth, id, 'cancel', (t) => cancelPaymentLink(t, id));
  return getPaymentLink(deps, auth, id);
}

/** Test mode only: pays a PENDING link of the store with a simulated payment, through the real workflow path. */
export async function simulateStorePayment(deps: ServiceDeps, auth: StoreScope, id: string, rail: RailId) {
  if (auth.environment !== 'test') {
    throw new AppError('live_mode_forbidden', 'Simulated payments need a test key (sk_test_…); live links are paid for real.');
  }
  await executeLinkUpdate(deps, auth, id, 'simulate', (t) => simulateLinkPayment(t, id, rail));
  return getPaymentLink(deps, auth, id);
}
