import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import { AppError } from '../../domain/errors.js';
import { hashCallbackToken, sameTokenHash } from '../../rails/mpesa/callback-token.js';
import { interpretCallback, type StkCallback } from '../../rails/mpesa/callback.js';
import { mpesaFacts } from '../../rails/mpesa/facts.js';
import {
  findStkRequestByTokenHash,
  listCallbacks,
  markCallbacksSuspicious,
  markStkSent,
  recordCallback,
  withdrawDisputedReceipt,
  type StkRequestRow,
} from '../../db/mpesa-repo.js';
import { believableReceipts, disputedReceipt, receiptsDisagree } from '../../rails/mpesa/receipts.js';
import { tellMobileMoneyCallback } from '../../temporal-client/index.js';
import type { Metrics } from '../../domain/metrics.js';
import { resultCodeLabel } from '../../rails/mpesa/result-codes.js';

export interface CallbackDeps {
  pool: DatabasePool;
  temporal: Client;
  logger?: Logger;
  metrics?: Metrics;
}

/** What Daraja expects back once we have the callback (pesafy-style; no body is documented). */
export const callbackAcknowledgement = { ResultCode: 0, ResultDesc: 'Accepted' } as const;

/**
 * Handles one Daraja callback. Callbacks are unsigned, so every one, success or failure, is only
 * a hint: it must come through the unguessable per-prompt token and name the CheckoutRequestID
 * (and MerchantRequestID) that prompt got; then it is stored and the workflow is told to settle
 * the prompt with an STK query. Nothing in the callback moves money: the amount that counts is
 * the prompt's own (an STK push cannot be paid at another amount), so a success claiming another
 * amount is stored as suspicious. Every distinct callback is kept, so a forged one that arrives
 * first cannot hide the genuine one; a repeat re-sends the hint, which covers a crash between
 * storing and signalling.
 */
export async function receiveStkCallback(deps: CallbackDeps, token: string, body: StkCallback): Promise<typeof callbackAcknowledgement> {
  const cb = interpretCallback(body);
  const tokenHash = hashCallbackToken(token);
  const request = await findStkRequestByTokenHash(deps.pool, tokenHash);
  if (!request || !sameTokenHash(request.callback_token_hash, tokenHash)) {
    deps.logger?.warn({ checkoutRequestId: cb.checkoutRequestId }, 'M-Pesa callback with an unknown token ignored');
    throw new AppError('not_found', 'No such callback.');
  }
  const bound = await bindCheckoutRequest(deps, request, cb.checkoutRequestId, cb.merchantRequestId);
  // Counted once the token proved the callback is for one of our prompts; the code from a closed set.
  deps.metrics?.stk('callback', resultCodeLabel(cb.resultCode));
  const success = cb.outcome.kind === 'success' ? cb.outcome : null;
  const suspicious = success && success.amountKes !== String(bound.amount_kes)
    ? `claims Amount ${success.amountKes}; the prompt asked for ${bound.amount_kes}`
    : null;
  const { stored } = await recordCallback(deps.pool, {
    checkout_request_id: cb.checkoutRequestId,
    merchant_request_id: cb.merchantRequestId,
    result_code: cb.resultCode,
    result_desc: cb.resultDesc.slice(0, 500),
    receipt: success?.receipt ?? null,
    amount_kes: success?.amountKes ?? null,
    phone_number: success?.phone ?? null,
    transaction_at: success?.transactionAt ?? null,
    suspicious_reason: suspicious,
    fingerprint: fingerprint(body),
    body,
  });
  const log = { linkId: bound.link_id, checkoutRequestId: cb.checkoutRequestId, resultCode: cb.resultCode };
  if (suspicious) deps.logger?.warn({ ...log, suspicious }, 'M-Pesa callback contradicts its prompt; stored as suspicious');
  else if (!stored) deps.logger?.info(log, 'M-Pesa callback already stored (or the prompt holds too many)');
  if (success?.phone && success.phone !== bound.phone_number) deps.logger?.warn(log, 'M-Pesa callback names another phone than the one prompted');
  if (stored && success && !suspicious) await disputeContradictedReceipt(deps, bound, cb.checkoutRequestId);
  await signalWorkflow(deps, bound, cb.checkoutRequestId);
  return callbackAcknowledgement;
}

/** Daraja retries send the same body; anything else about a prompt is a distinct callback. */
function fingerprint(body: StkCallback): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/** The token's prompt must be the one the callback names. A prompt whose answer we never got is bound now. */
async function bindCheckoutRequest(deps: CallbackDeps, request: StkRequestRow, checkoutRequestId: string, merchantRequestId: string): Promise<StkRequestRow> {
  if (request.checkout_request_id === null && (request.state === 'sending' || request.state === 'unknown')) {
    await markStkSent(deps.pool, request.link_id, request.attempt, { checkoutRequestId, merchantRequestId });
    const reread = await findStkRequestByTokenHash(deps.pool, request.callback_token_hash);
    if (reread?.checkout_request_id === checkoutRequestId) return reread;
  }
  const merchantMismatch = request.merchant_request_id && request.merchant_request_id !== merchantRequestId;
  if (request.checkout_request_id !== checkoutRequestId || merchantMismatch) {
    deps.logger?.warn({ linkId: request.link_id, checkoutRequestId }, 'M-Pesa callback names a request this token was not issued for; ignored');
    throw new AppError('not_found', 'No such callback.');
  }
  return request;
}


/**
 * A success callback naming another receipt than an earlier believable one: one of them is
 * forged (whoever learned the callback URL), and nothing says which. Both stop being believed,
 * and a payment already confirmed with the first shows its CheckoutRequestID instead.
 */
async function disputeContradictedReceipt(deps: CallbackDeps, request: StkRequestRow, checkoutRequestId: string): Promise<void> {
  const candidates = believableReceipts(await listCallbacks(deps.pool, checkoutRequestId), String(request.amount_kes));
  if (!receiptsDisagree(candidates)) return;
  await markCallbacksSuspicious(deps.pool, candidates.map((c) => c.id), disputedReceipt);
  if (await withdrawDisputedReceipt(deps.pool, mpesaFacts.id, checkoutRequestId)) {
    deps.logger?.warn({ linkId: request.link_id, checkoutRequestId }, 'M-Pesa callbacks name two receipts for one prompt; the receipt shown was withdrawn');
  }
}

/** Tells the link's workflow that a prompt has news; the hint carries the prompt's id and nothing else. */
async function signalWorkflow(deps: CallbackDeps, request: StkRequestRow, checkoutRequestId: string): Promise<void> {
  try {
    if (!(await tellMobileMoneyCallback(deps.temporal, request.link_id, checkoutRequestId))) {
      deps.logger?.warn({ linkId: request.link_id }, 'M-Pesa callback for a link whose workflow is gone; recorded only');
    }
  } catch {
    // Daraja retries a callback that is not acknowledged; the stored one will be signalled then.
    throw new AppError('upstream_unavailable', 'The callback could not be handed to the payment workflow; retry later.');
  }
}
