import { isIP } from 'node:net';
import type { Environment } from '../environment.js';
import { describeAddress, isForbiddenAddress } from './address-policy.js';

export { isForbiddenAddress };

/**
 * Where Malipo may send webhooks: the checks on the URL itself. In `live`, https only, to a
 * public host; in `test`, http too. Which addresses the host may resolve to (public only in live;
 * in test also the private networks the operator allows) is `address-policy.ts`, applied at
 * registration and again at every delivery attempt on the addresses the host resolves to then,
 * so a DNS answer that changes after creation (rebinding) is caught.
 */
export type UrlCheck = { ok: true; url: URL; ipLiteral: string | undefined } | { ok: false; message: string };

const maxUrlLength = 2048;
const internalSuffixes = ['.localhost', '.local', '.internal', '.home.arpa'];

/**
 * The checks that need no network: shape, scheme, credentials, and in live a host that is not
 * an internal name or a forbidden literal address. Resolving the host is the caller's next step.
 */
export function checkWebhookUrl(raw: string, env: Environment): UrlCheck {
  if (raw.length > maxUrlLength) return { ok: false, message: `must be at most ${maxUrlLength} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, message: 'must be an absolute URL such as https://example.com/webhooks' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, message: 'must start with https:// (or http:// with a test key)' };
  if (url.username || url.password) return { ok: false, message: 'must not contain a user name or password; authenticate deliveries with the signature' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const ipLiteral = isIP(host) ? host : undefined;
  if (env === 'test') return { ok: true, url, ipLiteral };
  if (url.protocol !== 'https:') return { ok: false, message: 'must use https:// with a live key' };
  const lower = host.toLowerCase();
  if (lower === 'localhost' || internalSuffixes.some((s) => lower.endsWith(s)) || (!ipLiteral && !lower.includes('.'))) {
    return { ok: false, message: `must name a public host with a live key; '${host}' is an internal name` };
  }
  if (ipLiteral && isForbiddenAddress(ipLiteral)) {
    return { ok: false, message: `must not point at a private, loopback, link-local or reserved address with a live key (${describeAddress(ipLiteral)})` };
  }
  return { ok: true, url, ipLiteral };
}
