import type { Environment } from '../../domain/environment.js';
import { formatUnits } from '../../domain/money.js';

/**
 * The USD price of a chain's own coin (BNB, ETH, POL, TRX, SOL), for the USD cost of a sweep plan
 * (docs/rates.md, "Native coin prices"). Informational: nothing is paid at this price, so unlike
 * the USDT/KES rate it needs no two sources; but when several answer they must agree within 2 %,
 * and a price is never guessed: without one the cost says why. Test keys read fixed prices
 * (`TEST_NATIVE_USD_PRICES`; testnet coins have none). Prices are decimal strings with at most 8
 * decimals, held as bigint micro-units of 10^-8 USD; nothing is a float past the JSON parser.
 */
export interface NativePriceSettings {
  /** `coingecko`, `coinbase`, or either with `@<base URL>`: the same wire format at another host. */
  readonly sources: readonly string[];
  /** Coin symbol → USD price, for the test environment. */
  readonly testPrices: Readonly<Record<string, string>>;
}

export type NativePrice = { ok: true; usd: string; source: string } | { ok: false; reason: string };

/** CoinGecko's coin ids (its `/coins/list`), by symbol. */
const coingeckoIds: Record<string, string> = { BNB: 'binancecoin', ETH: 'ethereum', POL: 'polygon-ecosystem-token', TRX: 'tron', SOL: 'solana' };

interface Source {
  name: string;
  url(coin: string): string | undefined;
  extract(body: unknown, coin: string): unknown;
}

const kinds: Record<string, { base: string; make(base: string): Omit<Source, 'name'> }> = {
  // GET /api/v3/simple/price?ids=binancecoin&vs_currencies=usd → {"binancecoin":{"usd":612.34}}
  coingecko: {
    base: 'https://api.coingecko.com',
    make: (base) => ({
      url: (coin) => (coingeckoIds[coin] ? `${base}/api/v3/simple/price?ids=${coingeckoIds[coin]}&vs_currencies=usd` : undefined),
      extract: (b: any, coin) => b?.[coingeckoIds[coin]!]?.usd,
    }),
  },
  // GET /v2/exchange-rates?currency=BNB → {"data":{"currency":"BNB","rates":{"USD":"612.34",…}}}
  coinbase: {
    base: 'https://api.coinbase.com',
    make: (base) => ({ url: (coin) => `${base}/v2/exchange-rates?currency=${encodeURIComponent(coin)}`, extract: (b: any, coin) => (b?.data?.currency === coin ? b?.data?.rates?.USD : undefined) }),
  },
};

/** A configured entry as a source; undefined when it is none (config/config.ts refuses it at boot). */
export function nativePriceSource(entry: string): Source | undefined {
  const [kind, base] = entry.split('@', 2) as [string, string | undefined];
  const k = kinds[kind];
  return k && { name: base ? `${kind}@${new URL(base).host}` : kind, ...k.make((base ?? k.base).replace(/\/+$/, '')) };
}

const scale = 8;
/** A positive price as 10^-8 USD units, from a JSON number or string; undefined for anything else. */
export function priceUnits(value: unknown): bigint | undefined {
  const text = typeof value === 'number' && Number.isFinite(value) ? value.toFixed(scale) : typeof value === 'string' ? value.trim() : '';
  const m = /^(\d{1,12})(?:\.(\d+))?$/.exec(text);
  if (!m) return undefined;
  const units = BigInt(m[1]!) * 10n ** BigInt(scale) + BigInt((m[2] ?? '').slice(0, scale).padEnd(scale, '0'));
  return units > 0n ? units : undefined;
}

const fetchTimeoutMs = 3_000;
const freshForMs = 60_000;
const maxSpreadPercent = 2n;

async function ask(source: Source, coin: string): Promise<{ source: string; units?: bigint; error?: string }> {
  const url = source.url(coin);
  if (!url) return { source: source.name, error: `no price of ${coin}` };
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(fetchTimeoutMs), headers: { accept: 'application/json' } });
    if (!res.ok) return { source: source.name, error: `HTTP ${res.status}` };
    const units = priceUnits(source.extract(await res.json(), coin));
    return units === undefined ? { source: source.name, error: `no usable ${coin}/USD price in the answer` } : { source: source.name, units };
  } catch (err) {
    return { source: source.name, error: (err as Error).message };
  }
}

/** Good prices, reused for a minute, by the sources asked and the coin. */
const cache = new Map<string, { price: NativePrice & { ok: true }; atMs: number }>();

export async function nativeUsdPrice(settings: NativePriceSettings, environment: Environment, coin: string): Promise<NativePrice> {
  if (environment === 'test') {
    const fixed = settings.testPrices[coin];
    return fixed ? { ok: true, usd: fixed, source: 'fixed-test-price' } : { ok: false, reason: `Test keys price no ${coin} (testnet coins have no price; TEST_NATIVE_USD_PRICES sets one).` };
  }
  const key = `${settings.sources.join(',')}|${coin}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.atMs < freshForMs) return hit.price;
  const sources = settings.sources.map(nativePriceSource).filter((s): s is Source => s !== undefined);
  const answers = await Promise.all(sources.map((s) => ask(s, coin)));
  const good = answers.filter((a) => a.units !== undefined).sort((a, b) => (a.units! < b.units! ? -1 : a.units! > b.units! ? 1 : 0));
  if (good.length === 0) return { ok: false, reason: `No ${coin}/USD price source answered (${answers.map((a) => `${a.source}: ${a.error}`).join('; ') || 'none configured'}).` };
  const low = good[0]!.units!;
  const high = good.at(-1)!.units!;
  if ((high - low) * 100n > low * maxSpreadPercent) {
    return { ok: false, reason: `The ${coin}/USD price sources disagree by more than ${maxSpreadPercent}% (${good.map((a) => `${a.source} ${formatUnits(a.units!, scale)}`).join(', ')}).` };
  }
  const price = { ok: true as const, usd: formatUnits(good[Math.floor((good.length - 1) / 2)]!.units!, scale), source: good.map((a) => a.source).join('+') };
  cache.set(key, { price, atMs: Date.now() });
  return price;
}

/**
 * `amountMinor` of a coin with `decimals` decimals, in USD at `usd` per coin, as a decimal string
 * with 6 decimals, rounded up (a plan's cost is a most).
 */
export function usdValue(amountMinor: bigint, decimals: number, usd: string): string {
  const units = priceUnits(usd)!;
  const divisor = 10n ** BigInt(decimals + scale - 6);
  const micro = (amountMinor * units + divisor - 1n) / divisor;
  return formatUnits(micro, 6);
}
