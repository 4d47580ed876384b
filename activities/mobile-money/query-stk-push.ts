import { stkQueryPath } from '../../rails/mpesa/daraja-paths.js';
import { ApplicationFailure } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { classifyDarajaError } from '../../rails/mpesa/daraja-errors.js';
import { mpesaFailureTypes as T } from '../../rails/mpesa/failure-types.js';
import type { Metrics } from '../../domain/metrics.js';
import { isSuccessCode, resultCodeLabel, resultReason } from '../../rails/mpesa/result-codes.js';
import { buildStkQueryBody } from '../../rails/mpesa/stk-request.js';
import { findStkRequestByCheckoutId } from '../../db/mobile-money-repo.js';
import type { ServiceSettings } from '../../services/settings.js';
import { DarajaAnswerError, DarajaUnreachableError, type JsonAnswer } from '../../rails/mpesa/daraja-client.js';
import { openSessionOrFail } from './session-failures.js';


export interface StkQueryResult {
  /** `pending`: the prompt is still open; `unknown_request`: Daraja does not know the id. */
  status: 'pending' | 'succeeded' | 'failed' | 'unknown_request';
  resultCode: string | null;
  /** Our readable reason for a failure (rails/mpesa/result-codes.ts). */
  reason: string | null;
}

/**
 * Asks Daraja how a prompt ended, with the merchant's own credentials: the authenticated pull
 * that confirms (or denies) an unsigned callback, and settles a prompt whose callback never came.
 * The query does not return the receipt number or amount; the callback does.
 */
export async function queryStkPush(
  deps: { pool: DatabasePool; config: ServiceSettings; now?: () => Date; metrics?: Metrics },
  input: { linkId: string; checkoutRequestId: string },
): Promise<StkQueryResult> {
  const request = await findStkRequestByCheckoutId(deps.pool, input.checkoutRequestId);
  if (!request || request.link_id !== input.linkId) {
    throw ApplicationFailure.nonRetryable(`No prompt ${input.checkoutRequestId} was sent for link ${input.linkId}.`, T.invalidInput);
  }
  const session = await openSessionOrFail(deps, request.store_id, request.environment);
  const body = buildStkQueryBody(session.merchant, session.passkey, (deps.now ?? (() => new Date()))(), input.checkoutRequestId);
  let answer: JsonAnswer;
  try {
    answer = await session.post(stkQueryPath, body);
  } catch (err) {
    deps.metrics?.stk('query', 'error');
    if (err instanceof DarajaUnreachableError) throw ApplicationFailure.retryable(err.message, T.unavailable);
    if (err instanceof DarajaAnswerError && err.answer.kind !== 'credentials') throw ApplicationFailure.retryable(err.message, T.unavailable);
    if (err instanceof DarajaAnswerError) throw ApplicationFailure.nonRetryable(err.message, T.credentialsRejected);
    throw err;
  }
  try {
    const result = interpretQueryAnswer(answer);
    deps.metrics?.stk('query', queryLabel(result));
    return result;
  } catch (err) {
    deps.metrics?.stk('query', 'error');
    throw err;
  }
}

/** An answer as a metric label: its ResultCode (bounded by resultCodeLabel), or why it has none. */
function queryLabel(result: StkQueryResult): string {
  return result.resultCode !== null ? resultCodeLabel(result.resultCode) : result.status;
}

export function interpretQueryAnswer(answer: JsonAnswer): StkQueryResult {
  const b = answer.json as Record<string, unknown> | undefined;
  if (answer.status === 200 && b && b.ResultCode !== undefined && b.ResultCode !== null) {
    const code = String(b.ResultCode).trim();
    if (isSuccessCode(code)) return { status: 'succeeded', resultCode: code, reason: null };
    return { status: 'failed', resultCode: code, reason: resultReason(code, typeof b.ResultDesc === 'string' ? b.ResultDesc : undefined).reason };
  }
  const error = classifyDarajaError(answer.status, answer.json ?? answer.text);
  switch (error.kind) {
    case 'pending':
      return { status: 'pending', resultCode: null, reason: null };
    case 'unknown_request':
      return { status: 'unknown_request', resultCode: null, reason: null };
    case 'credentials':
    case 'invalid_token':
      throw ApplicationFailure.nonRetryable(`M-Pesa refused the store's credentials: ${error.errorMessage}`, T.credentialsRejected);
    default:
      // Busy, or an answer we do not understand: ask again later rather than guess.
      throw ApplicationFailure.retryable(`M-Pesa query failed: ${error.errorMessage}`, T.unavailable);
  }
}
