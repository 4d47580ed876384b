import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { findLink, listLinkPayments, type LinkRow } from '../../db/payment-link-repo.js';
import { AppError, notFound } from '../../domain/errors.js';
import { kesToUsdtMicro, parseUsdt, usdtToKes } from '../../domain/money.js';
import type { RailId } from '../../domain/rails.js';
import { paymentLinkWorkflowId } from '../../workflows/payment-link-contract.js';
import { paymentLinkDetailDto, paymentLinkDto } from '../dto/payment-link.js';
import type { ApiDeps } from '../deps.js';
import type { AuthContext } from '../plugins/auth.js';
import { freshIds, type RequestIds } from '../plugins/idempotency.js';
import { assertRailsAvailable, openPaymentRequest, resumePaymentRequest } from './payment-requests.js';

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
async function resolveAmounts(deps: ApiDeps, auth: AuthContext, input: CreateLinkInput) {
  const mobile = input.enabledRails.includes('MOBILE_MONEY');
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
export async function createPaymentLink(deps: ApiDeps, auth: AuthContext, input: CreateLinkInput, ids: RequestIds = freshIds) {
  const id = await ids.idFor('paymentLink');
  // A retry of an Idempotency-Key whose first attempt died after writing the link completes that link.
  const resumed = await resumePaymentRequest(deps, auth, id);
  if (resumed) return paymentLinkDto(resumed, deps.config);
  await assertRailsAvailable(deps, auth, input.enabledRails, 'enabledRails');
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
    redirectUrl: input.redirectUrl ?? null,
    expiresInMinutes: input.expiresInMinutes,
  });
  return paymentLinkDto(row, deps.config);
}

export async function getPaymentLink(deps: ApiDeps, auth: AuthContext, id: string) {
  const row = await findLink(deps.pool, auth.storeId, auth.environment, id);
  if (!row) throw notFound('payment link');
  return paymentLinkDetailDto(row, await listLinkPayments(deps.pool, id), deps.config);
}

export async function requireLink(deps: ApiDeps, auth: AuthContext, id: string): Promise<LinkRow> {
  const row = await findLink(deps.pool, auth.storeId, auth.environment, id);
  if (!row) throw notFound('payment link');
  return row;
}

/** How a rejected workflow update reads as an API error (validators name the reason in `type`). */
const updateFailureCodes: Record<string, ConstructorParameters<typeof AppError>[0]> = {
  invalid_state: 'invalid_state',
  rail_not_enabled: 'invalid_field',
};

/**
 * Runs an update on the link's workflow after checking in the read model that the link belongs
 * to the caller's store (another store's link is a 404, never a 409).
 */
export async function executeLinkUpdate<Ret>(
  deps: ApiDeps,
  auth: AuthContext,
  linkId: string,
  run: (handle: WorkflowHandle) => Promise<Ret>,
): Promise<Ret> {
  await requireLink(deps, auth, linkId);
  try {
    return await run(deps.temporal.workflow.getHandle(paymentLinkWorkflowId(linkId)));
  } catch (err) {
    const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type && updateFailureCodes[cause.type]) {
      const message = cause.message.replace(/^\w+: /, '');
      throw new AppError(updateFailureCodes[cause.type]!, message, cause.type === 'rail_not_enabled' ? 'rail' : undefined);
    }
    deps.logger?.error({ err, linkId }, 'payment-link update failed');
    throw new AppError('upstream_failed', 'The payment engine could not complete the request; nothing was charged. Retry shortly.');
  }
}
