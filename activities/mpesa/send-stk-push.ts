import { callbackPath, stkPushPath } from '../../rails/mpesa/daraja-paths.js';
import { ApplicationFailure } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { hashCallbackToken, newCallbackToken, sameTokenHash } from '../../rails/mpesa/callback-token.js';
import { classifyDarajaError, type DarajaError } from '../../rails/mpesa/daraja-errors.js';
import { mpesaFailureTypes as T } from '../../rails/mpesa/failure-types.js';
import { businessShortCode } from '../../rails/mpesa/merchant.js';
import { buildStkPushBody } from '../../rails/mpesa/stk-request.js';
import { stkInputProblem, stkRefusal } from '../../rails/mpesa/stk-outcomes.js';
import {
  claimStkRequest,
  findStkRequest,
  markStkFailed,
  markStkSent,
  releaseStkRequest,
  type StkRequestRow,
} from '../../db/mpesa-repo.js';
import { findLinkAccountRef } from '../../db/mpesa-c2b-repo.js';
import type { ServiceSettings } from '../../services/settings.js';
import { DarajaAnswerError, DarajaUnreachableError, type JsonAnswer } from '../../rails/mpesa/daraja-client.js';
import { openSessionOrFail } from './session-failures.js';

export interface SendStkPushInput {
  linkId: string;
  storeId: string;
  environment: 'test' | 'live';
  phoneNumber: string;
  amountKes: number;
  accountReference: string;
  description: string;
  /** A deterministic id from the workflow: a retried activity with the same attempt sends nothing new. */
  attempt: string;
}

/**
 * What the workflow gets back, and so what Temporal's history records: the prompt's ids, never
 * the callback token (anyone with the Temporal UI reads histories; the token stays in the database).
 */
export interface SendStkPushResult {
  checkoutRequestId: string;
  merchantRequestId: string;
}


interface Deps {
  pool: DatabasePool;
  config: ServiceSettings;
  now?: () => Date;
}

/**
 * Sends the M-Pesa prompt once per (link, attempt). The request is recorded before Daraja is
 * called and its answer after, so a retry returns the recorded result; a call that may have
 * reached Daraja without a clear answer is never repeated (the customer could get two prompts).
 */
export async function sendStkPush(deps: Deps, input: SendStkPushInput): Promise<SendStkPushResult> {
  checkInput(input);
  const previous = await findStkRequest(deps.pool, input.linkId, input.attempt);
  if (previous) return replay(deps.pool, previous);
  const session = await openSessionOrFail(deps, input.storeId, input.environment);
  const token = newCallbackToken();
  const tokenHash = hashCallbackToken(token);
  const row = await claimStkRequest(deps.pool, {
    link_id: input.linkId,
    attempt: input.attempt,
    store_id: input.storeId,
    environment: input.environment,
    phone_number: input.phoneNumber,
    amount_kes: input.amountKes,
    business_short_code: businessShortCode(session.merchant),
    party_b: session.merchant.shortcode,
    callback_token_hash: tokenHash,
  });
  // Lost a race with a concurrent run of the same attempt: that run owns the prompt.
  if (!sameTokenHash(row.callback_token_hash, tokenHash)) return replay(deps.pool, row);

  const body = buildStkPushBody({
    merchant: session.merchant,
    passkey: session.passkey,
    now: (deps.now ?? (() => new Date()))(),
    amountKes: input.amountKes,
    phoneNumber: input.phoneNumber,
    callbackUrl: `${deps.config.publicBaseUrl}${callbackPath(token)}`,
    // The link's paybill account reference when it has one: the receipt then names what a
    // customer would type to pay the same link from the menu (and a C2B twin matches it).
    accountReference: (await findLinkAccountRef(deps.pool, input.linkId)) ?? input.accountReference,
    description: input.description,
  });
  let answer: JsonAnswer;
  try {
    answer = await session.post(stkPushPath, body);
  } catch (err) {
    throw await failOnTransport(deps.pool, input, err);
  }
  const accepted = acceptedIds(answer);
  if (accepted) {
    await markStkSent(deps.pool, input.linkId, input.attempt, accepted);
    return accepted;
  }
  if (answer.status === 200) throw await unknownOutcome(deps.pool, input, 'Daraja answered 200 without a CheckoutRequestID.');
  throw await failOnAnswer(deps.pool, input, classifyDarajaError(answer.status, answer.json ?? answer.text));
}

function checkInput(input: SendStkPushInput): void {
  const problem = stkInputProblem(input);
  if (problem) throw ApplicationFailure.nonRetryable(problem, T.invalidInput);
}

/** ResponseCode is the string "0" on acceptance (a number is tolerated). */
function acceptedIds(answer: JsonAnswer): { checkoutRequestId: string; merchantRequestId: string } | null {
  const b = answer.json as Record<string, unknown> | undefined;
  if (answer.status !== 200 || !b || String(b.ResponseCode) !== '0') return null;
  if (typeof b.CheckoutRequestID !== 'string' || b.CheckoutRequestID === '') return null;
  return { checkoutRequestId: b.CheckoutRequestID, merchantRequestId: typeof b.MerchantRequestID === 'string' ? b.MerchantRequestID : '' };
}

async function replay(pool: DatabasePool, row: StkRequestRow): Promise<SendStkPushResult> {
  if (row.state === 'sent') {
    return { checkoutRequestId: row.checkout_request_id!, merchantRequestId: row.merchant_request_id ?? '' };
  }
  if (row.state === 'rejected' || row.state === 'unknown') {
    throw ApplicationFailure.nonRetryable(row.failure_message ?? 'M-Pesa refused the prompt.', row.failure_type ?? T.rejected);
  }
  // 'sending': an earlier run stopped between calling Daraja and recording its answer.
  throw await unknownOutcome(pool, { linkId: row.link_id, attempt: row.attempt }, 'An earlier run stopped before Daraja’s answer was recorded.');
}

/** Records a prompt whose fate is unknown and returns the failure to throw. */
async function unknownOutcome(pool: DatabasePool, at: { linkId: string; attempt: string }, why: string): Promise<ApplicationFailure> {
  const message = `${why} The prompt may have reached the phone, so it is not sent again: check the phone, then start a new payment attempt if no prompt arrived.`;
  await markStkFailed(pool, at.linkId, at.attempt, { state: 'unknown', type: T.outcomeUnknown, message });
  return ApplicationFailure.nonRetryable(message, T.outcomeUnknown);
}

async function failOnTransport(pool: DatabasePool, input: SendStkPushInput, err: unknown): Promise<Error> {
  if (err instanceof DarajaUnreachableError && !err.maybeDelivered) {
    await releaseStkRequest(pool, input.linkId, input.attempt);
    return ApplicationFailure.retryable(err.message, T.unavailable);
  }
  if (err instanceof DarajaUnreachableError) return unknownOutcome(pool, input, `${err.message} after the prompt was sent.`);
  if (err instanceof DarajaAnswerError) return failOnAnswer(pool, input, err.answer);
  throw err;
}

/** Maps a refusal to a failure type, recording it so a replay answers the same. */
async function failOnAnswer(pool: DatabasePool, input: SendStkPushInput, answer: DarajaError): Promise<Error> {
  if (answer.kind === 'busy') {
    // Spike arrest, quota, system busy: nothing was started, so a retry may send it.
    await releaseStkRequest(pool, input.linkId, input.attempt);
    return ApplicationFailure.retryable(`M-Pesa is busy: ${answer.errorMessage}`, T.unavailable);
  }
  const { type, message } = stkRefusal(answer);
  await markStkFailed(pool, input.linkId, input.attempt, { state: 'rejected', type, message });
  return ApplicationFailure.nonRetryable(message, type);
}
