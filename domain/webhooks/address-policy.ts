import { BlockList, isIP } from 'node:net';
import type { Environment } from '../environment.js';

/**
 * Which IP addresses a webhook may connect to. Live: public addresses only. Test: public
 * addresses, plus the private networks the operator allowed (WEBHOOK_TEST_ALLOWED_NETWORKS, for a
 * merchant's laptop or a container next to Malipo). Some ranges are never reachable, whatever the
 * configuration: link-local (where cloud metadata services live), unspecified (0.0.0.0 reaches
 * the machine itself), multicast and broadcast.
 *
 * IPv6 forms that stand for an IPv4 address (mapped ::ffff:a.b.c.d, translated ::ffff:0:a.b.c.d,
 * compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d) are judged as that IPv4 address; a 6to4 address
 * (2002:AABB:CCDD::) is only public when the IPv4 address it embeds is. Every check works on these
 * normal forms, so spelling an address differently never changes the answer. (URL hosts such as
 * 2130706433, 0177.0.0.1 or 0x7f.1 reach here as 127.0.0.1: the URL parser normalises them.)
 */
type Cidr = readonly [address: string, prefix: number, name: string];

const nonPublicV4: readonly Cidr[] = [
  ['0.0.0.0', 8, 'unspecified'], ['10.0.0.0', 8, 'private'], ['100.64.0.0', 10, 'carrier-grade NAT'], ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], ['172.16.0.0', 12, 'private'], ['192.0.0.0', 24, 'reserved'], ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'], ['192.168.0.0', 16, 'private'], ['198.18.0.0', 15, 'reserved'], ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'], ['224.0.0.0', 4, 'multicast'], ['240.0.0.0', 4, 'reserved'],
];
const nonPublicV6: readonly Cidr[] = [
  ['::', 128, 'unspecified'], ['::1', 128, 'loopback'], ['::', 96, 'reserved'], ['64:ff9b:1::', 48, 'reserved'], ['100::', 64, 'reserved'],
  ['2001::', 23, 'reserved'], ['2001:db8::', 32, 'documentation'], ['fc00::', 7, 'private (unique local)'], ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'], ['ff00::', 8, 'multicast'],
];
/** Never a webhook target, even in test with the widest allow-list. Link-local first: it names the overlap. */
const neverV4: readonly Cidr[] = [
  ['169.254.0.0', 16, 'link-local'], ['0.0.0.0', 8, 'unspecified'], ['224.0.0.0', 4, 'multicast'], ['240.0.0.0', 4, 'reserved or broadcast'],
];
const neverV6: readonly Cidr[] = [
  ['fe80::', 10, 'link-local'], ['::', 128, 'unspecified'], ['fec0::', 10, 'site-local'], ['ff00::', 8, 'multicast'],
];

/** What the names in WEBHOOK_TEST_ALLOWED_NETWORKS stand for. */
export const namedNetworks: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['127.0.0.0/8', '::1/128', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

interface Parsed {
  /** The address checks run on: IPv4 for the IPv6 forms that stand for one. */
  family: 4 | 6;
  address: string;
  groups: number[] | undefined;
  /** The IPv4 address inside a 6to4 address. */
  embeddedV4: string | undefined;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted IPv4 folded in). */
export function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => parseInt(g, 16));
}

const v4Of = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
const zero = (groups: number[], from: number, to: number) => groups.slice(from, to).every((g) => g === 0);

function parse(raw: string): Parsed | undefined {
  const bare = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return { family: 4, address: bare, groups: undefined, embeddedV4: undefined };
  if (family !== 6) return undefined;
  const g = ipv6Groups(bare);
  const standsForV4 =
    (zero(g, 0, 5) && g[5] === 0xffff) || // mapped
    (zero(g, 0, 4) && g[4] === 0xffff && g[5] === 0) || // translated
    (zero(g, 0, 6) && g[6] !== 0) || // compatible (:: and ::1 stay IPv6)
    (g[0] === 0x64 && g[1] === 0xff9b && zero(g, 2, 6)); // NAT64 well-known prefix
  if (standsForV4) return { family: 4, address: v4Of(g[6]!, g[7]!), groups: undefined, embeddedV4: undefined };
  return { family: 6, address: bare, groups: g, embeddedV4: g[0] === 0x2002 ? v4Of(g[1]!, g[2]!) : undefined };
}

function blockList(v4: readonly Cidr[], v6: readonly Cidr[]): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}
const nonPublic = blockList(nonPublicV4, nonPublicV6);
const never = blockList(neverV4, neverV6);

function inList(list: BlockList, p: Parsed): boolean {
  if (p.family === 4) return list.check(p.address, 'ipv4');
  return list.check(p.address, 'ipv6') || (p.embeddedV4 !== undefined && list.check(p.embeddedV4, 'ipv4'));
}

/** The address as written, plus what it stands for when that differs. */
function shown(raw: string, p: Parsed): string {
  if (p.embeddedV4) return `${raw} (6to4 for ${p.embeddedV4})`;
  return p.address === raw.replace(/^\[|\]$/g, '') ? p.address : `${raw} (${p.address})`;
}

/** The name of the most specific non-public range an address falls in (::1 is loopback before it is part of ::/96). */
function rangeName(p: Parsed): string {
  const [family, n] = p.embeddedV4 ? [4 as const, toBigInt(parse(p.embeddedV4)!)] : [p.family, toBigInt(p)];
  const hits = (family === 4 ? nonPublicV4 : nonPublicV6).filter((c) => {
    const [first, last] = cidrRange(c);
    return first <= n && n <= last;
  });
  return hits.sort((a, b) => b[1] - a[1])[0]?.[2] ?? 'reserved';
}

/** "127.0.0.1, a loopback address": what a refusal says about the address. */
export function describeAddress(address: string): string {
  const p = parse(address);
  if (!p) return `${address}, which is not an IP address`;
  const kind = rangeName(p);
  return `${shown(address, p)}, ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address`;
}

/** True for an address a live webhook must never reach (anything not public). Unparseable input counts as forbidden. */
export function isForbiddenAddress(address: string): boolean {
  const p = parse(address);
  return !p || inList(nonPublic, p);
}

export type AddressVerdict =
  /** `internal`: allowed, but inside a private network: nothing it answers may be stored or shown. */
  | { ok: true; internal: boolean }
  | { ok: false; reason: string };

/**
 * Whether a webhook of `env` may connect to `address`. `allowed` is the operator's test allow-list
 * (`testAllowList(config.webhooks.testAllowedNetworks)`); it never applies to live.
 */
export function checkAddress(address: string, env: Environment, allowed: BlockList): AddressVerdict {
  const p = parse(address);
  if (!p) return { ok: false, reason: `${address}, which is not an IP address` };
  if (!inList(nonPublic, p)) return { ok: true, internal: false };
  const what = describeAddress(address);
  if (env === 'live') return { ok: false, reason: `${what}; live webhooks only go to public addresses` };
  if (inList(never, p)) return { ok: false, reason: `${what}, which webhooks never reach` };
  // The allow-list names networks, not 6to4 spellings of them.
  if (!p.embeddedV4 && inList(allowed, p)) return { ok: true, internal: true };
  return { ok: false, reason: `${what}; test webhooks reach loopback and private addresses only where the operator allows them (WEBHOOK_TEST_ALLOWED_NETWORKS)` };
}

/** The operator's allowed networks (canonical CIDRs from the config) as a lookup. */
export function testAllowList(networks: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of networks) {
    const [net, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(net, Number(prefix), isIP(net) === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}

function toBigInt(p: Parsed): bigint {
  if (p.family === 4) return p.address.split('.').reduce((n, o) => (n << 8n) | BigInt(o), 0n);
  return p.groups!.reduce((n, g) => (n << 16n) | BigInt(g), 0n);
}

/** First and last address of a network, as numbers. */
function range(family: 4 | 6, start: bigint, prefix: number): [bigint, bigint] {
  const size = 1n << BigInt((family === 4 ? 32 : 128) - prefix);
  const first = (start / size) * size;
  return [first, first + size - 1n];
}

/** The ranges in the lists above are written in their own family (none stands for IPv4), so parsing keeps it. */
function cidrRange([net, prefix]: Cidr): [bigint, bigint] {
  const p = parse(net)!;
  return range(p.family, toBigInt(p), prefix);
}

function format(family: 4 | 6, n: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
  const groups = [...Array(8).keys()].map((i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  // The URL parser writes the canonical (compressed) form.
  return new URL(`http://[${groups.join(':')}]`).hostname.replace(/^\[|\]$/g, '');
}

/**
 * Parses WEBHOOK_TEST_ALLOWED_NETWORKS: comma-separated `loopback`, `private`, CIDRs or single
 * addresses, or `none`. Returns canonical CIDRs (the network address, IPv4-mapped IPv6 written as
 * IPv4), or the problems. A network that overlaps a never-reachable range is refused outright.
 */
export function parseAllowedNetworks(value: string): { networks: string[] } | { problems: string[] } {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.some((i) => i.toLowerCase() === 'none')) return items.length === 1 ? { networks: [] } : { problems: ["'none' cannot be combined with other networks"] };
  const networks: string[] = [];
  const problems: string[] = [];
  for (const item of items.flatMap((i) => namedNetworks[i.toLowerCase()] ?? [i])) {
    const parsed = parseCidr(item);
    if ('problem' in parsed) problems.push(parsed.problem);
    else if (!networks.includes(parsed.cidr)) networks.push(parsed.cidr);
  }
  return problems.length ? { problems } : { networks };
}

function parseCidr(item: string): { cidr: string } | { problem: string } {
  const notNetwork = { problem: `'${item}' is not a network: use loopback, private, none, a CIDR such as 172.17.0.0/16, or an address` };
  const [address, prefixText, extra] = item.split('/');
  const p = address === undefined ? undefined : parse(address);
  if (!p || extra !== undefined || address!.includes('%') || (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText))) return notNetwork;
  let prefix = prefixText === undefined ? (isIP(address!) === 4 ? 32 : 128) : Number(prefixText);
  // An IPv6 form of an IPv4 address (::ffff:a.b.c.d/120) is the IPv4 network it stands for.
  if (isIP(address!) === 6 && p.family === 4) prefix -= 96;
  if (prefix < 0 || prefix > (p.family === 4 ? 32 : 128)) return notNetwork;
  const [first, last] = range(p.family, toBigInt(p), prefix);
  for (const c of p.family === 4 ? neverV4 : neverV6) {
    const [a, b] = cidrRange(c);
    if (first <= b && a <= last) return { problem: `'${item}' includes ${c[2]} addresses (${c[0]}/${c[1]}), which webhooks never reach` };
  }
  return { cidr: `${format(p.family, first)}/${prefix}` };
}
