import { Resolver } from 'node:dns/promises';
import { isIP, type BlockList } from 'node:net';
import type { Environment } from '../../domain/environment.js';
import { checkAddress, testAllowList } from '../../domain/webhooks/address-policy.js';
import { checkWebhookUrl } from '../../domain/webhooks/url-policy.js';

/** An address a delivery may connect to: one the policy checked for this attempt. */
export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

export type Destination =
  /** `internal`: a private address the operator allows for test webhooks; nothing it answers is kept. */
  | { ok: true; url: URL; addresses: PinnedAddress[]; internal: boolean }
  /** `unresolvedUrl`: the URL is fine but its host did not resolve (the only failure a test registration lets through). */
  | { ok: false; message: string; unresolvedUrl: URL | undefined };

/** What the policy reads from the configuration (`config.webhooks`). */
export interface DestinationSettings {
  dnsServers: readonly string[];
  testAllowedNetworks: readonly string[];
}

const resolveTimeoutMs = 3000;
/** RFC 6761: these names are loopback, whatever a resolver says. */
const localhostAddresses: PinnedAddress[] = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];

/**
 * Applies the URL policy including the network part, in both environments: the host is resolved
 * here and every address it resolves to must be allowed (public; in test also the private
 * networks the operator allows, never link-local). The request then connects only to the
 * addresses that were checked (`addresses`), never to a second, possibly different, DNS answer.
 * That closes the DNS rebinding gap between check and connect. Hosts are resolved through DNS
 * servers only (`WEBHOOK_DNS_SERVERS`, else the system's), not /etc/hosts.
 */
export async function resolveDestination(raw: string, env: Environment, settings: DestinationSettings): Promise<Destination> {
  const check = checkWebhookUrl(raw, env);
  if (!check.ok) return { ...check, unresolvedUrl: undefined };
  const host = check.url.hostname.replace(/^\[|\]$/g, '');
  let addresses: PinnedAddress[];
  if (check.ipLiteral) addresses = [{ address: check.ipLiteral, family: isIP(check.ipLiteral) as 4 | 6 }];
  else if (host === 'localhost' || host.endsWith('.localhost')) addresses = localhostAddresses;
  else {
    try {
      addresses = await resolveAll(host, settings.dnsServers);
    } catch (err) {
      return { ok: false, message: `host '${host}' could not be resolved (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`, unresolvedUrl: check.url };
    }
    if (addresses.length === 0) return { ok: false, message: `host '${host}' does not resolve to any address`, unresolvedUrl: check.url };
  }
  const allowed = allowListOf(settings.testAllowedNetworks);
  let internal = false;
  for (const a of addresses) {
    const verdict = checkAddress(a.address, env, allowed);
    if (!verdict.ok) {
      const message = check.ipLiteral ? `points at ${verdict.reason}` : `host '${host}' resolves to ${verdict.reason}`;
      return { ok: false, message, unresolvedUrl: undefined };
    }
    internal ||= verdict.internal;
  }
  return { ok: true, url: check.url, addresses, internal };
}

const allowLists = new WeakMap<readonly string[], BlockList>();
function allowListOf(networks: readonly string[]): BlockList {
  let list = allowLists.get(networks);
  if (!list) allowLists.set(networks, (list = testAllowList(networks)));
  return list;
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
