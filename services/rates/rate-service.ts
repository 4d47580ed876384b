import type { DatabasePool } from 'slonik';
import { loadRateReference, saveRateReference } from '../../db/rate-repo.js';
import type { Environment } from '../../domain/environment.js';
import { AppError } from '../../domain/errors.js';
import { parseRate } from '../../domain/money.js';
import { checkQuotes, defaultRatePolicy, type Quote, type RatePolicy } from '../../domain/rate-checks.js';

/**
 * The KES per USDT rate for converting amounts (docs/rates.md). Test keys use a fixed rate. Live
 * keys read every configured source at once and accept a rate only when it passes the checks in
 * domain/rate-checks.ts: in a sane band, at least two sources agreeing, no large jump from the
 * last good rate. When no trustworthy rate can be read, the last good rate serves while it is
 * younger than ten minutes (unless the sources agree on a jump away from it); after that the
 * request is refused with `rate_unavailable`, saying why.
 */
export interface Rate {
  kesPerUsdt: string;
  /** The sources that agreed, joined with `+` (e.g. `coingecko+coinbase`). */
  source: string;
  fetchedAtMs: number;
}

export interface RateSource {
  name: string;
  url: string;
  /** Extracts KES per USDT from the source's JSON. */
  extract(body: unknown): unknown;
}

/** Where the last good live rate is kept: PostgreSQL in the service, so every API process and restart shares it. */
export interface RateReference {
  load(): Promise<Rate | undefined>;
  save(rate: Rate): Promise<void>;
}

export const maxRateAgeMs = 10 * 60_000;
const freshForMs = 60_000;
const fetchTimeoutMs = 3_000;

const knownSources: Record<string, Omit<RateSource, 'name'>> = {
  coingecko: { url: 'https://api.coingecko.com/api/v3/simple/price?ids=tether&vs_currencies=kes', extract: (b: any) => b?.tether?.kes },
  coinbase: { url: 'https://api.coinbase.com/v2/exchange-rates?currency=USDT', extract: (b: any) => b?.data?.rates?.KES },
};

/** A source at an operator's URL: `{"kesPerUsdt": "129.5"}`, or CoinGecko's or Coinbase's shape. */
export function urlSource(name: string, url: string): RateSource {
  return { name, url, extract: (b: any) => b?.kesPerUsdt ?? b?.tether?.kes ?? b?.data?.rates?.KES };
}

/** What the rate service is built from (RATE_URL, RATE_SOURCES, the RATE_* checks, TEST_KES_PER_USDT). */
export interface RateSettings {
  readonly rateUrl: string | undefined;
  readonly testKesPerUsdt: string;
  readonly rates: {
    readonly sources: readonly string[];
    readonly minKesPerUsdt: number;
    readonly maxKesPerUsdt: number;
    readonly maxSpreadPercent: number;
    readonly maxJumpPercent: number;
  };
}

/** RATE_URL (if set) and RATE_SOURCES: known names or URLs. */
export function liveRateSources(config: Pick<RateSettings, 'rateUrl' | 'rates'>): RateSource[] {
  const sources: RateSource[] = config.rateUrl ? [urlSource('RATE_URL', config.rateUrl)] : [];
  for (const entry of config.rates.sources) {
    const known = knownSources[entry];
    sources.push(known ? { name: entry, ...known } : urlSource(new URL(entry).host, entry));
  }
  return sources;
}

export function memoryRateReference(): RateReference {
  let last: Rate | undefined;
  return { load: async () => last, save: async (rate) => void (last = rate) };
}

export function pgRateReference(pool: DatabasePool): RateReference {
  return { load: () => loadRateReference(pool), save: (rate) => saveRateReference(pool, rate) };
}

/** The service's rate service: configured sources and checks, the last good rate in PostgreSQL. */
export function rateServiceFor(config: RateSettings, pool: DatabasePool): RateService {
  const { sources: _names, ...policy } = config.rates;
  return new RateService({ testKesPerUsdt: config.testKesPerUsdt, sources: liveRateSources(config), policy, reference: pgRateReference(pool) });
}

function toRateString(value: unknown): string | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n) || n <= 0 || n > 1_000_000) return undefined;
  const s = n.toFixed(6).replace(/\.?0+$/, '');
  parseRate(s);
  return s;
}

async function readQuote(source: RateSource): Promise<Quote> {
  try {
    const res = await fetch(source.url, { signal: AbortSignal.timeout(fetchTimeoutMs), headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const rate = toRateString(source.extract(await res.json()));
    if (!rate) throw new Error('no usable KES rate in the answer');
    return { source: source.name, kesPerUsdt: rate };
  } catch (err) {
    return { source: source.name, error: (err as Error).message };
  }
}

export class RateService {
  private fresh: Rate | undefined;
  private readonly policy: RatePolicy;
  private readonly reference: RateReference;

  constructor(
    private readonly opts: {
      testKesPerUsdt: string;
      sources: RateSource[];
      now?: () => number;
      policy?: Partial<RatePolicy>;
      reference?: RateReference;
    },
  ) {
    this.policy = { ...defaultRatePolicy, ...opts.policy };
    this.reference = opts.reference ?? memoryRateReference();
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  async kesPerUsdt(environment: Environment): Promise<Rate> {
    if (environment === 'test') return { kesPerUsdt: this.opts.testKesPerUsdt, source: 'fixed-test-rate', fetchedAtMs: this.now() };
    if (this.fresh && this.now() - this.fresh.fetchedAtMs < freshForMs) return this.fresh;
    const quotes = await Promise.all(this.opts.sources.map(readQuote));
    const now = this.now();
    const last = await this.reference.load();
    const verdict = checkQuotes(quotes, this.policy, last && { kesPerUsdt: last.kesPerUsdt, ageMs: now - last.fetchedAtMs });
    if (verdict.ok) {
      this.fresh = { kesPerUsdt: verdict.kesPerUsdt, source: verdict.sources.join('+'), fetchedAtMs: now };
      await this.reference.save(this.fresh);
      return this.fresh;
    }
    // Sources down or in disagreement: a recent good rate still holds. Sources that agree on a
    // large move away from it say it no longer holds, so it does not serve then.
    if (verdict.reason !== 'jump' && last && now - last.fetchedAtMs < maxRateAgeMs) return last;
    throw new AppError(
      'rate_unavailable',
      `No trustworthy USDT/KES rate is available: ${verdict.message}. The KES amount cannot be computed; retry shortly, or send both usdtAmount and mobileMoneyAmount to set it yourself.`,
    );
  }
}
