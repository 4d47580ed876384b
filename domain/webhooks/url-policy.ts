import { BlockList, isIP } from 'node:net';
import type { Environment } from '../environment.js';

/**
 * Where Malipo may send webhooks. In `test`, any http(s) URL (a merchant's laptop, a tunnel, a
 * container on the same network). In `live`, https only, and never an address inside the
 * server's own networks: loopback, private, link-local (where cloud metadata services live),
 * carrier-grade NAT, multicast and reserved ranges — otherwise an API key could make Malipo call
 * internal services (SSRF). The same address check runs again at every delivery attempt on the
 * addresses the host resolves to then, so a DNS answer that changes after creation (rebinding)
 * is caught.
 */
const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) forbidden.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) forbidden.addSubnet(net, prefix, 'ipv6');

/** IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64): the IPv4 part decides. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:|::|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2]!, 16);
  const lo = parseInt(m[3]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** True for an address a live webhook must never reach. Unparseable input counts as forbidden. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return forbidden.check(bare, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(bare);
  if (v4) return forbidden.check(v4, 'ipv4');
  return forbidden.check(bare, 'ipv6');
}

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
    return { ok: false, message: `must not point at a private, loopback, link-local or reserved address with a live key (${host})` };
  }
  return { ok: true, url, ipLiteral };
}
