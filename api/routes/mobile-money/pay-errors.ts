import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { AppError } from '../../../domain/errors.js';
import { mpesaFailureTypes as T } from '../../../domain/mpesa/failure-types.js';

/**
 * How a failed `startMobileMoneyPayment` update reads as an API error. The workflow's validator
 * rejects with `invalid_state: …` or `rail_not_enabled: …`; the STK push activity fails with one
 * of the M-Pesa failure types (domain/mpesa/failure-types.ts) inside an ActivityFailure.
 */
export function payErrorFromUpdate(err: unknown): AppError | null {
  if (err instanceof WorkflowNotFoundError) return new AppError('invalid_state', 'The payment link no longer accepts payments.');
  if (!(err instanceof WorkflowUpdateFailedError)) return null;
  const validator = err.cause instanceof ApplicationFailure ? err.cause : undefined;
  if (validator) {
    const [prefix, ...rest] = validator.message.split(': ');
    const message = rest.join(': ') || validator.message;
    if (prefix === 'invalid_state' || validator.type === 'invalid_state') return new AppError('invalid_state', message);
    if (prefix === 'prompt_limit' || validator.type === 'prompt_limit') return new AppError('prompt_limit_reached', message);
    if (prefix === 'rail_not_enabled' || validator.type === 'rail_not_enabled') {
      return new AppError('rail_not_available', `${message} Create a link with MOBILE_MONEY in enabledRails to take M-Pesa payments.`);
    }
  }
  const activity = err.cause instanceof ActivityFailure ? err.cause : undefined;
  const failure = activity?.cause instanceof ApplicationFailure ? activity.cause : undefined;
  if (activity && !failure) return new AppError('upstream_failed', 'M-Pesa did not answer in time; check the phone before trying again.');
  if (!failure) return null;
  return fromActivityFailure(failure);
}

function fromActivityFailure(f: ApplicationFailure): AppError {
  switch (f.type) {
    case T.credentialsRejected:
      return new AppError('credentials_rejected', `${f.message}`);
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
