import { timingSafeEqual } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import { AppError } from '../../domain/errors.js';
import { interpretCallback, type StkCallback } from '../../domain/mpesa/callback.js';
import { isSuccessCode, resultReason } from '../../domain/mpesa/result-codes.js';
import { findStkRequestByToken, markStkSent, recordCallback, type CallbackRow, type StkRequestRow } from '../../db/mobile-money-repo.js';
import { paymentConfirmed, paymentFailed, paymentLinkWorkflowId, type PaymentReport } from '../../workflows/payment-link-contract.js';

export interface CallbackDeps {
  pool: DatabasePool;
  temporal: Client;
  logger?: Logger;
}

/** What Daraja expects back once we have the callback (pesafy-style; no body is documented). */
export const callbackAcknowledgement = { ResultCode: 0, ResultDesc: 'Accepted' } as const;

/**
 * Handles one Daraja callback. Callbacks are unsigned, so one is only a hint: it must come
 * through the unguessable per-prompt token, name the CheckoutRequestID (and MerchantRequestID)
 * that prompt got, and the workflow still confirms it with an STK query before CONFIRMED. The
 * first callback is stored; a duplicate changes nothing but re-sends the stored result's signal
 * (signals are idempotent by CheckoutRequestID), which covers a crash between storing and signalling.
 */
export async function receiveStkCallback(deps: CallbackDeps, token: string, body: StkCallback): Promise<typeof callbackAcknowledgement> {
  const cb = interpretCallback(body);
  const request = await findStkRequestByToken(deps.pool, token);
  if (!request || !sameText(request.callback_token, token)) {
    deps.logger?.warn({ checkoutRequestId: cb.checkoutRequestId }, 'M-Pesa callback with an unknown token ignored');
    throw new AppError('not_found', 'No such callback.');
  }
  const bound = await bindCheckoutRequest(deps, request, cb.checkoutRequestId, cb.merchantRequestId);
  const stored = await recordCallback(deps.pool, {
    checkout_request_id: cb.checkoutRequestId,
    merchant_request_id: cb.merchantRequestId,
    result_code: cb.resultCode,
    result_desc: cb.resultDesc.slice(0, 500),
    receipt: cb.outcome.kind === 'success' ? cb.outcome.receipt : null,
    amount_kes: cb.outcome.kind === 'success' ? cb.outcome.amountKes : null,
    phone_number: cb.outcome.kind === 'success' ? cb.outcome.phone : null,
    transaction_at: cb.outcome.kind === 'success' ? cb.outcome.transactionAt : null,
    body,
  });
  const log = { linkId: bound.link_id, checkoutRequestId: cb.checkoutRequestId, resultCode: stored.row.result_code };
  if (stored.duplicate) {
    const differs = stored.row.result_code !== cb.resultCode || (cb.outcome.kind === 'success' && stored.row.receipt !== cb.outcome.receipt);
    deps.logger?.[differs ? 'warn' : 'info'](log, differs ? 'M-Pesa callback contradicts the one already stored; kept the first' : 'duplicate M-Pesa callback');
  }
  if (cb.outcome.kind === 'success' && cb.outcome.phone && cb.outcome.phone !== bound.phone_number) {
    deps.logger?.warn(log, 'M-Pesa callback paid from another phone than the one prompted');
  }
  await signalWorkflow(deps, bound, stored.row);
  return callbackAcknowledgement;
}

/** The token's prompt must be the one the callback names. A prompt whose answer we never got is bound now. */
async function bindCheckoutRequest(deps: CallbackDeps, request: StkRequestRow, checkoutRequestId: string, merchantRequestId: string): Promise<StkRequestRow> {
  if (request.checkout_request_id === null && (request.state === 'sending' || request.state === 'unknown')) {
    await markStkSent(deps.pool, request.link_id, request.attempt, { checkoutRequestId, merchantRequestId });
    const reread = await findStkRequestByToken(deps.pool, request.callback_token);
    if (reread?.checkout_request_id === checkoutRequestId) return reread;
  }
  const merchantMismatch = request.merchant_request_id && request.merchant_request_id !== merchantRequestId;
  if (request.checkout_request_id !== checkoutRequestId || merchantMismatch) {
    deps.logger?.warn({ linkId: request.link_id, checkoutRequestId }, 'M-Pesa callback names a request this token was not issued for; ignored');
    throw new AppError('not_found', 'No such callback.');
  }
  return request;
}

async function signalWorkflow(deps: CallbackDeps, request: StkRequestRow, cb: CallbackRow): Promise<void> {
  const handle = deps.temporal.workflow.getHandle(paymentLinkWorkflowId(request.link_id));
  const report = paymentReport(request, cb);
  try {
    if (report) await handle.signal(paymentConfirmed, report);
    else if (!isSuccessCode(cb.result_code)) {
      await handle.signal(paymentFailed, { rail: 'MOBILE_MONEY', key: cb.checkout_request_id, reason: resultReason(cb.result_code, cb.result_desc).reason });
    } else {
      // ResultCode 0 without a receipt or amount proves nothing; the workflow's query settles it.
      deps.logger?.warn({ linkId: request.link_id, checkoutRequestId: cb.checkout_request_id }, 'M-Pesa success callback without receipt or amount; left to the status query');
    }
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      deps.logger?.warn({ linkId: request.link_id }, 'M-Pesa callback for a link whose workflow is gone; recorded only');
      return;
    }
    // Daraja retries a callback that is not acknowledged; the stored one will be signalled then.
    throw new AppError('upstream_unavailable', 'The callback could not be handed to the payment workflow; retry later.');
  }
}

export function paymentReport(request: StkRequestRow, cb: CallbackRow): PaymentReport | null {
  if (!isSuccessCode(cb.result_code) || !cb.receipt || !cb.amount_kes) return null;
  return {
    rail: 'MOBILE_MONEY',
    key: cb.checkout_request_id,
    externalId: cb.receipt,
    payer: cb.phone_number ?? request.phone_number,
    amountMinor: cb.amount_kes,
    decimals: 0,
    at: cb.transaction_at ?? cb.received_at,
  };
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
