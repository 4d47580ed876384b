import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Environment } from '../../domain/environment.js';
import { checkWebhookUrl, isForbiddenAddress } from '../../domain/webhooks/url-policy.js';

/** The address a delivery must connect to, when the policy pinned one. */
export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

export type Destination = { ok: true; url: URL; pinned: PinnedAddress | undefined } | { ok: false; message: string };

const resolveTimeoutMs = 3000;

/**
 * Applies the URL policy including the network part. In live, the host is resolved here and
 * every address it resolves to must be public; the request then connects to the address that
 * was checked (`pinned`), never to a second, possibly different, DNS answer. That closes the DNS
 * rebinding gap between check and connect. Live hosts are resolved through DNS servers only
 * (`WEBHOOK_DNS_SERVERS`, else the system's), not /etc/hosts.
 */
export async function resolveDestination(raw: string, env: Environment, dnsServers: readonly string[]): Promise<Destination> {
  const check = checkWebhookUrl(raw, env);
  if (!check.ok) return check;
  if (env === 'test') return { ok: true, url: check.url, pinned: undefined };
  if (check.ipLiteral) return { ok: true, url: check.url, pinned: { address: check.ipLiteral, family: isIP(check.ipLiteral) as 4 | 6 } };
  const host = check.url.hostname;
  let addresses: PinnedAddress[];
  try {
    addresses = await resolveAll(host, dnsServers);
  } catch (err) {
    return { ok: false, message: `host '${host}' could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})` };
  }
  if (addresses.length === 0) return { ok: false, message: `host '${host}' does not resolve to any address` };
  const bad = addresses.find((a) => isForbiddenAddress(a.address));
  if (bad) {
    return { ok: false, message: `host '${host}' resolves to ${bad.address}, a private, loopback, link-local or reserved address; live webhooks only go to public addresses` };
  }
  return { ok: true, url: check.url, pinned: addresses[0] };
}

async function resolveAll(host: string, dnsServers: readonly string[]): Promise<PinnedAddress[]> {
  const resolver = new Resolver({ timeout: resolveTimeoutMs, tries: 2 });
  if (dnsServers.length > 0) resolver.setServers([...dnsServers]);
  const [v4, v6] = await Promise.all([
    resolver.resolve4(host).catch(noRecords),
    resolver.resolve6(host).catch(noRecords),
  ]);
  return [...v4.map((address) => ({ address, family: 4 as const })), ...v6.map((address) => ({ address, family: 6 as const }))];
}

/** "No such name" and "no records of this type" mean an empty answer; other failures propagate. */
function noRecords(err: NodeJS.ErrnoException): string[] {
  if (err.code === 'ENOTFOUND' || err.code === 'ENODATA' || err.code === 'NXDOMAIN') return [];
  throw err;
}
