import { isIP } from 'node:net';
import { describeAddress, isForbiddenAddress } from './webhooks/address-policy.js';

/**
 * The store's default redirect URL goes to every link created without one, in front of real
 * customers, so on top of the link's own rules (an http(s) URL of at most 2,000 characters) it
 * must be https on a public host: not localhost, an internal name, or a private, loopback or
 * reserved address. (A link's own `redirectUrl` may still point anywhere http(s) for a test.)
 * Returns what is wrong, or null.
 */
const internalSuffixes = ['.localhost', '.local', '.internal', '.home.arpa'];

export function defaultRedirectProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL such as https://shop.example.com/thanks';
  }
  if (url.protocol !== 'https:') return 'must start with https://: the store default is sent to every customer';
  if (url.username || url.password) return 'must not contain a user name or password';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host)) {
    return isForbiddenAddress(host) ? `must name a public host, not ${describeAddress(host)}` : null;
  }
  if (host === 'localhost' || internalSuffixes.some((s) => host.endsWith(s)) || !host.includes('.')) {
    return `must name a public host; '${host}' is an internal name`;
  }
  return null;
}
