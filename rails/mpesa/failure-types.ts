/**
 * The `type` of the ApplicationFailures the M-Pesa activities throw. The API maps each to an
 * HTTP answer (api/routes/mobile-money/pay-errors.ts); the workflow may list the non-retryable
 * ones in its retry policy. Only MpesaUnavailable is retryable.
 */
export const mpesaFailureTypes = {
  /** Daraja could not be reached, or was busy (spike arrest, quota, 5xx): retry with backoff. */
  unavailable: 'MpesaUnavailable',
  /** Daraja refused the merchant's key/secret, shortcode or passkey: the merchant must reconnect. */
  credentialsRejected: 'MpesaCredentialsRejected',
  /** Daraja refused the paying phone number. */
  phoneRejected: 'MpesaPhoneRejected',
  /** A prompt is already open on that phone: the customer should finish it or wait a minute. */
  subscriberBusy: 'MpesaSubscriberBusy',
  /** Any other refusal of the request by Daraja. */
  rejected: 'MpesaRejected',
  /** No clear answer after sending: the prompt may have reached the phone, so it is not resent. */
  outcomeUnknown: 'MpesaOutcomeUnknown',
  /** The store has no M-Pesa connection in this environment. */
  notConnected: 'MpesaNotConnected',
  /** The stored credentials cannot be decrypted with the configured ENCRYPTION_KEY. */
  credentialsUnreadable: 'MpesaCredentialsUnreadable',
  /** The activity was called with input that can never succeed (a bug in the caller). */
  invalidInput: 'MpesaInvalidInput',
} as const;

export type MpesaFailureType = (typeof mpesaFailureTypes)[keyof typeof mpesaFailureTypes];

export const nonRetryableMpesaFailureTypes: MpesaFailureType[] = Object.values(mpesaFailureTypes).filter(
  (t) => t !== mpesaFailureTypes.unavailable,
);
