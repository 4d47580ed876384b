/**
 * What a Daraja error answer means for us. Errors come as `{requestId, errorCode, errorMessage}`,
 * and one code can carry several meanings (500.001.1001 is "Wrong credentials", "Merchant does
 * not exist", "Unable to lock subscriber" and, on a query, "The transaction is being processed"),
 * so both the code and the message decide. Gateway faults may have any other shape.
 */
export type DarajaErrorKind =
  /** 404.001.03: expired, revoked or other-environment token (also: the app lacks the product). */
  | 'invalid_token'
  /** The shortcode, passkey, key/secret or product were refused: the merchant must fix them. */
  | 'credentials'
  /** The paying phone number was refused. */
  | 'phone'
  /** A prompt is already open on the phone (wait about a minute). */
  | 'subscriber_locked'
  /** Query only: the prompt is still open. */
  | 'pending'
  /** Query only: Daraja does not know this CheckoutRequestID. */
  | 'unknown_request'
  /** Spike arrest, quota, "system busy", internal errors, gateway 5xx: try again later. */
  | 'busy'
  /** Another field of our request was refused (Amount, CallBackURL, Timestamp, AccountReference…). */
  | 'invalid_request'
  | 'unknown';

export interface DarajaError {
  kind: DarajaErrorKind;
  httpStatus: number;
  errorCode: string | null;
  /** The operator's own words, trimmed; safe to show (it never holds our secrets). */
  errorMessage: string;
}

export function classifyDarajaError(httpStatus: number, body: unknown): DarajaError {
  const obj = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const errorCode = typeof obj.errorCode === 'string' ? obj.errorCode : null;
  const rawMessage = typeof obj.errorMessage === 'string' ? obj.errorMessage : typeof body === 'string' ? body : '';
  const errorMessage = rawMessage.replace(/\s+/g, ' ').trim().slice(0, 300) || `HTTP ${httpStatus}`;
  return { kind: kindOf(httpStatus, errorCode, errorMessage.toLowerCase()), httpStatus, errorCode, errorMessage };
}

function kindOf(status: number, code: string | null, msg: string): DarajaErrorKind {
  if (code === '404.001.03' || msg.includes('invalid access token')) return 'invalid_token';
  if (msg.includes('being processed')) return 'pending';
  if (msg.includes('unable to lock subscriber')) return 'subscriber_locked';
  if (msg.includes('wrong credentials') || msg.includes('merchant does not exist') || msg.includes('no apiproduct match')) return 'credentials';
  if (code?.startsWith('400.008.')) return 'credentials';
  if (code === '400.002.02' || msg.startsWith('bad request')) {
    if (msg.includes('checkoutrequestid')) return 'unknown_request';
    if (msg.includes('phonenumber') || msg.includes('partya')) return 'phone';
    if (msg.includes('businessshortcode')) return 'credentials';
    return 'invalid_request';
  }
  if (msg.includes('does not exist') || msg.includes('not found') || msg.includes('no such')) {
    // A query about an id Daraja never issued; only checked after the credential messages above.
    if (status !== 404 || code !== '404.001.01') return 'unknown_request';
  }
  if (code?.startsWith('500.003.') || status === 429 || status >= 500) return 'busy';
  return 'unknown';
}
