import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { AppError } from '../domain/errors.js';
import { mpesaFailureTypes as T } from '../rails/mpesa/failure-types.js';

/** The link updates the API runs: the M-Pesa prompt, cancel, a simulated payment. */
export type LinkUpdate = 'prompt' | 'cancel' | 'simulate';

/**
 * The one mapping of a failed update to an API error, keyed on the failure's `type` (never its
 * message): the workflow's validators reject with `invalid_state`, `rail_not_enabled` or
 * `prompt_limit`; the STK push activity fails with an M-Pesa failure type inside an
 * ActivityFailure. Null for anything else (the caller logs it and answers upstream_failed).
 */
export function updateFailureToAppError(update: LinkUpdate, err: unknown): AppError | null {
  if (err instanceof WorkflowNotFoundError) {
    return update === 'prompt' ? new AppError('invalid_state', 'The payment link no longer accepts payments.') : null;
  }
  if (!(err instanceof WorkflowUpdateFailedError)) return null;
  if (err.cause instanceof ApplicationFailure) return fromValidator(update, err.cause);
  const activity = err.cause instanceof ActivityFailure ? err.cause : undefined;
  if (!activity || update !== 'prompt') return null;
  if (!(activity.cause instanceof ApplicationFailure)) {
    return new AppError('upstream_failed', 'M-Pesa did not answer in time; check the phone before trying again.');
  }
  return fromPromptFailure(activity.cause);
}

/** The validator's message, without the `type: ` it starts with (kept for older readers of histories). */
const reason = (f: ApplicationFailure) => f.message.replace(/^\w+: /, '');

function fromValidator(update: LinkUpdate, f: ApplicationFailure): AppError | null {
  switch (f.type) {
    case 'invalid_state':
      return new AppError('invalid_state', reason(f));
    case 'prompt_limit':
      return new AppError('prompt_limit_reached', reason(f));
    case 'rail_not_enabled':
      return update === 'prompt'
        ? new AppError('rail_not_available', `${reason(f)} Create a link with MOBILE_MONEY in enabledRails to take M-Pesa payments.`)
        : new AppError('invalid_field', reason(f), 'rail');
    default:
      return null;
  }
}

function fromPromptFailure(f: ApplicationFailure): AppError {
  switch (f.type) {
    case T.credentialsRejected:
      return new AppError('credentials_rejected', f.message);
    case T.phoneRejected:
      return new AppError('invalid_field', f.message, 'phoneNumber');
    case T.subscriberBusy:
      return new AppError('prompt_in_progress', f.message);
    case T.notConnected:
      return new AppError('rail_not_available', `${f.message} Connect M-Pesa first (POST /v1/merchant/clients/:clientId/mobile-money/connect).`);
    case T.unavailable:
      return new AppError('upstream_failed', `M-Pesa could not be reached; no prompt was sent. Try again shortly. (${f.message})`);
    case T.rejected:
    case T.outcomeUnknown:
      return new AppError('upstream_failed', f.message);
    case T.credentialsUnreadable:
      return new AppError('internal', 'The stored M-Pesa credentials cannot be decrypted with the configured ENCRYPTION_KEY; the server operator must restore the key or reconnect M-Pesa.');
    default:
      return new AppError('internal', 'The M-Pesa prompt failed on our side. Quote the request id when you contact support.');
  }
}
