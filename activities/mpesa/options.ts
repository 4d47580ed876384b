import type { ActivityOptions } from '@temporalio/common';
import { nonRetryableMpesaFailureTypes } from '../../rails/mpesa/failure-types.js';

/**
 * Suggested proxy options for the M-Pesa activities (no Node imports: safe for workflow code).
 * Daraja calls time out after 20 s each and may make two calls (token refresh), so 60 s per
 * attempt; an unreachable or busy operator is retried with backoff four times (about 15 s in
 * all) so the customer waiting on the pay request gets a 502 quickly rather than a hung request.
 */
export const mobileMoneyActivityOptions: ActivityOptions = {
  startToCloseTimeout: '60 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '8 seconds',
    maximumAttempts: 4,
    nonRetryableErrorTypes: nonRetryableMpesaFailureTypes,
  },
};
