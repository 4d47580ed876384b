import { ApplicationFailure } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import type { Environment } from '../../domain/environment.js';
import { mpesaFailureTypes as T } from '../../rails/mpesa/failure-types.js';
import type { ServiceSettings } from '../../services/settings.js';
import { CredentialsUnreadableError, NotConnectedError, openMerchantSession, type MerchantSession } from '../../rails/mpesa/merchant-session.js';

/** Opens the merchant's session inside an activity: a missing or unreadable connection is final. */
export async function openSessionOrFail(
  deps: { pool: DatabasePool; config: ServiceSettings; now?: () => Date },
  storeId: string,
  environment: Environment,
): Promise<MerchantSession> {
  try {
    return await openMerchantSession(deps, storeId, environment);
  } catch (err) {
    if (err instanceof NotConnectedError) throw ApplicationFailure.nonRetryable(err.message, T.notConnected);
    if (err instanceof CredentialsUnreadableError) throw ApplicationFailure.nonRetryable(err.message, T.credentialsUnreadable);
    throw err;
  }
}
