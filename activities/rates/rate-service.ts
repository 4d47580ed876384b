import type { Environment } from '../../domain/environment.js';
import { AppError } from '../../domain/errors.js';
import { parseRate } from '../../domain/money.js';

/**
 * The KES per USDT rate for converting amounts. Test keys use a fixed rate; live keys read
 * several public sources with failover, so one source going down does not stop link creation.
 * A rate is refused only when every source is unreachable and the last good one is older than
 * ten minutes.
 */
export interface Rate {
  kesPerUsdt: string;
  source: string;
  fetchedAtMs: number;
}

export interface RateSource {
  name: string;
  url: string;
  /** Extracts KES per USDT from the source's JSON. */
  extract(body: unknown): unknown;
}

export const maxRateAgeMs = 10 * 60_000;
const freshForMs = 60_000;
const fetchTimeoutMs = 3_000;

export function defaultLiveSources(rateUrl: string | undefined): RateSource[] {
  const sources: RateSource[] = [];
  if (rateUrl) {
    sources.push({
      name: 'RATE_URL',
      url: rateUrl,
      // Accepts {"kesPerUsdt": "129.5"} or CoinGecko's {"tether":{"kes":129.5}}.
      extract: (b: any) => b?.kesPerUsdt ?? b?.tether?.kes ?? b?.data?.rates?.KES,
    });
  }
  sources.push(
    { name: 'coingecko', url: 'https://api.coingecko.com/api/v3/simple/price?ids=tether&vs_currencies=kes', extract: (b: any) => b?.tether?.kes },
    { name: 'coinbase', url: 'https://api.coinbase.com/v2/exchange-rates?currency=USDT', extract: (b: any) => b?.data?.rates?.KES },
  );
  return sources;
}

function toRateString(value: unknown): string | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isFinite(n) || n <= 0 || n > 1_000_000) return undefined;
  const s = n.toFixed(6).replace(/\.?0+$/, '');
  parseRate(s);
  return s;
}

export class RateService {
  private last: Rate | undefined;

  constructor(
    private readonly opts: { testKesPerUsdt: string; sources: RateSource[]; now?: () => number },
  ) {}

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  async kesPerUsdt(environment: Environment): Promise<Rate> {
    if (environment === 'test') return { kesPerUsdt: this.opts.testKesPerUsdt, source: 'fixed-test-rate', fetchedAtMs: this.now() };
    if (this.last && this.now() - this.last.fetchedAtMs < freshForMs) return this.last;
    const failures: string[] = [];
    for (const source of this.opts.sources) {
      try {
        const res = await fetch(source.url, { signal: AbortSignal.timeout(fetchTimeoutMs), headers: { accept: 'application/json' } });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        const rate = toRateString(source.extract(await res.json()));
        if (!rate) throw new Error('no usable KES rate in the answer');
        this.last = { kesPerUsdt: rate, source: source.name, fetchedAtMs: this.now() };
        return this.last;
      } catch (err) {
        failures.push(`${source.name}: ${(err as Error).message}`);
      }
    }
    if (this.last && this.now() - this.last.fetchedAtMs < maxRateAgeMs) return this.last;
    throw new AppError(
      'upstream_unavailable',
      'No fresh USDT/KES rate is available (every rate source failed), so the KES amount cannot be computed. Send mobileMoneyAmount explicitly or retry shortly.',
    );
  }
}
