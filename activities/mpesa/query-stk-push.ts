import { stkQueryPath } from '../../rails/mpesa/daraja-paths.js';
import { ApplicationFailure } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { mpesaFailureTypes as T } from '../../rails/mpesa/failure-types.js';
import type { Metrics } from '../../domain/metrics.js';
import { resultCodeLabel } from '../../rails/mpesa/result-codes.js';
import { interpretQueryAnswer, type StkQueryResult } from '../../rails/mpesa/stk-outcomes.js';
import { buildStkQueryBody } from '../../rails/mpesa/stk-request.js';
import { findStkRequestByCheckoutId } from '../../db/mpesa-repo.js';
import type { ServiceSettings } from '../../services/settings.js';
import { DarajaAnswerError, DarajaUnreachableError, type JsonAnswer } from '../../rails/mpesa/daraja-client.js';
import { openSessionOrFail } from './session-failures.js';


export type { StkQueryResult };

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
  const read = interpretQueryAnswer(answer);
  if ('failure' in read) {
    deps.metrics?.stk('query', 'error');
    const { message, type, retryable } = read.failure;
    throw retryable ? ApplicationFailure.retryable(message, type) : ApplicationFailure.nonRetryable(message, type);
  }
  deps.metrics?.stk('query', queryLabel(read.result));
  return read.result;
}

/** An answer as a metric label: its ResultCode (bounded by resultCodeLabel), or why it has none. */
function queryLabel(result: StkQueryResult): string {
  return result.resultCode !== null ? resultCodeLabel(result.resultCode) : result.status;
}
