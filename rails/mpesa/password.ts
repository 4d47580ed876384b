/**
 * Daraja's request password: base64 of the plain concatenation shortcode + passkey + timestamp.
 * The shortcode and timestamp must be the very ones in the request body, so callers compute the
 * timestamp once and pass it to both (a mismatch is answered "Wrong credentials").
 */
export function stkPassword(businessShortCode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${businessShortCode}${passkey}${timestamp}`, 'utf8').toString('base64');
}
