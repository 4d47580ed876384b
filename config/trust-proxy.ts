import { isIP } from 'node:net';

/**
 * TRUST_PROXY: which peers may say, in X-Forwarded-For (and -Proto, -Host), who the client is.
 * `false` believes nobody (the default: the socket's peer is the client); a list trusts those
 * addresses, CIDR ranges and proxy-addr's named ranges, so the client is the nearest address in
 * X-Forwarded-For that is not one of them. A chain of proxies (CDN, then load balancer) is listed
 * whole. A hop count is refused: Fastify no longer honours one, because it cannot check the peer
 * and lets a client that reaches the app directly choose its own address.
 */
export type TrustProxy = false | readonly string[];

const namedRanges = new Set(['loopback', 'linklocal', 'uniquelocal']);

const entryHint = 'is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8), loopback, linklocal or uniquelocal';

/** Parses the setting; every problem is named, and nothing is guessed. */
export function parseTrustProxy(raw: string | undefined): { value: TrustProxy } | { problems: string[] } {
  const text = (raw ?? '').trim();
  if (text === '' || text === 'off' || text === 'false' || text === '0') return { value: false };
  if (text === 'true' || text === '*' || text === 'on' || text === 'all') {
    return {
      problems: [
        `'${text}' would trust every peer: trusting every peer lets any client choose its address (and so its rate limits). ` +
          "List the proxies' addresses or CIDR ranges instead (e.g. 10.0.0.0/8).",
      ],
    };
  }
  if (/^\d+$/.test(text)) {
    return {
      problems: [
        `'${text}' is a number of hops, which cannot be checked: a client that reaches Malipo directly could then choose its own address. ` +
          "List the proxies' addresses or CIDR ranges instead (e.g. 10.0.0.0/8, or the load balancer's subnet).",
      ],
    };
  }
  const entries = text.split(',').map((e) => e.trim());
  const problems: string[] = [];
  for (const entry of entries) {
    if (entry === '') problems.push('an empty entry in the list (two commas in a row, or one at an end)');
    else if (!isTrustEntry(entry)) problems.push(`'${entry}' ${entryHint}`);
  }
  return problems.length ? { problems } : { value: Object.freeze(entries) };
}

function isTrustEntry(entry: string): boolean {
  if (namedRanges.has(entry) || isIP(entry) !== 0) return true;
  const match = /^([^/]+)\/(\d{1,3})$/.exec(entry);
  if (!match) return false;
  const family = isIP(match[1]!);
  const bits = Number(match[2]);
  return (family === 4 && bits <= 32) || (family === 6 && bits <= 128);
}
