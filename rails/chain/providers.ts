import type { Logger } from 'pino';
import { BaseError } from 'viem';

/**
 * The health of each RPC provider a rail is read from, process-wide (like the chain-id verdicts):
 * which one lags, errors or disagrees, and until when it is sidelined. A sidelined provider is
 * asked last, after the healthy ones, never dropped: with two providers configured every window
 * still needs both (rails/chain/README.md), and a provider that was wrong once may be right now.
 * Providers are named by their position in `RPC_URL_<RAIL>_<ENV>` and their host, never by URL,
 * which may carry an API key.
 */
export type ProviderState = 'ok' | 'lagging' | 'erroring' | 'disagreeing';

export interface ProviderHealth {
  /** 1-based position in the configured list. */
  index: number;
  host: string;
  state: ProviderState;
  /** Why it was last reported, in a few words; null while ok. */
  reason: string | null;
  /** ISO time until which it is asked last; null when not sidelined. */
  sidelinedUntil: string | null;
  /** Reports in a row (the sideline doubles with each); reset after ten quiet minutes. */
  strikes: number;
}

export interface RailProviderHealth {
  rail: string;
  environment: string;
  providers: ProviderHealth[];
}

/** Sidelines: 60 s, doubling with each report in a row, at most 15 minutes. */
export const sideline = { firstMs: 60_000, maxMs: 15 * 60_000 };
/** A provider with no report for this long starts again from the first sideline. */
const quietMs = 10 * 60_000;

/** `#2 rpc.example.com`: a provider as logs and readiness name it (no path, no query, no credentials). */
export function providerLabel(url: string, position: number): string {
  let host: string;
  try {
    host = new URL(url).host;
  } catch {
    host = 'invalid-url';
  }
  return `#${position + 1} ${host}`;
}

/** A failure in a few words, without the URL (viem puts it in its messages; it may carry a key). */
export function describeFailure(err: unknown): string {
  const text = err instanceof BaseError ? err.shortMessage : err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.replace(/\b[a-z]+:\/\/\S+/gi, '<rpc>').slice(0, 200);
}

interface Entry {
  url: string;
  health: ProviderHealth;
  sidelinedUntilMs: number;
  lastReportMs: number;
  loggedAtMs: number;
}

/** The providers of one rail in one environment. */
export class ProviderBook {
  private readonly entries: Entry[];

  constructor(
    readonly rail: string,
    readonly environment: string,
    urls: readonly string[],
    private readonly logger?: Pick<Logger, 'warn' | 'info'>,
  ) {
    this.entries = urls.map((url, i) => ({
      url,
      health: { index: i + 1, host: providerLabel(url, i).slice(`#${i + 1} `.length), state: 'ok', reason: null, sidelinedUntil: null, strikes: 0 },
      sidelinedUntilMs: 0,
      lastReportMs: 0,
      loggedAtMs: 0,
    }));
  }

  /** Whether this book was made for exactly these URLs (a changed configuration makes a new one). */
  serves(urls: readonly string[]): boolean {
    return urls.length === this.entries.length && urls.every((u, i) => this.entries[i]!.url === u);
  }

  get size(): number {
    return this.entries.length;
  }

  /** Positions (0-based) in the order to ask them: the healthy in configured order, then the sidelined, soonest back first. */
  order(nowMs: number): number[] {
    const positions = this.entries.map((_, i) => i);
    const out = positions.filter((i) => this.entries[i]!.sidelinedUntilMs <= nowMs);
    const benched = positions.filter((i) => this.entries[i]!.sidelinedUntilMs > nowMs);
    benched.sort((a, b) => this.entries[a]!.sidelinedUntilMs - this.entries[b]!.sidelinedUntilMs);
    return [...out, ...benched];
  }

  isSidelined(position: number, nowMs: number): boolean {
    return this.entries[position]!.sidelinedUntilMs > nowMs;
  }

  label(position: number): string {
    return providerLabel(this.entries[position]!.url, position);
  }

  /**
   * Records that a provider lagged, erred or disagreed, and sidelines it (unless `sidelineIt` is
   * false: a disagreement between two providers where neither can be shown wrong). Logs a warn
   * naming the rail and the provider (never its URL) when a sideline starts, and at most once a
   * minute for reports that sideline nothing.
   */
  report(position: number, state: Exclude<ProviderState, 'ok'>, reason: string, nowMs: number, sidelineIt = true): void {
    const e = this.entries[position]!;
    // Quiet since its last report or the end of its sideline, whichever came later: it starts again from the first sideline.
    if (nowMs - Math.max(e.lastReportMs, e.sidelinedUntilMs) > quietMs) e.health.strikes = 0;
    e.lastReportMs = nowMs;
    e.health.state = state;
    e.health.reason = reason;
    const who = { rail: this.rail, environment: this.environment, provider: this.label(position), state, reason };
    const sidelines = sidelineIt && e.sidelinedUntilMs <= nowMs;
    reportListener?.(this.rail, this.environment, position + 1, state, sidelines);
    if (!sidelines) {
      if (nowMs - e.loggedAtMs < 60_000) return;
      e.loggedAtMs = nowMs;
      this.logger?.warn(who, `chain provider ${state}`);
      return;
    }
    e.health.strikes += 1;
    const forMs = Math.min(sideline.firstMs * 2 ** (e.health.strikes - 1), sideline.maxMs);
    e.sidelinedUntilMs = nowMs + forMs;
    e.health.sidelinedUntil = new Date(e.sidelinedUntilMs).toISOString();
    e.loggedAtMs = nowMs;
    this.logger?.warn({ ...who, sidelinedForSeconds: forMs / 1000 }, `chain provider ${state}; asked last for a while`);
  }

  /** Records a provider that answered well: once its sideline has passed it reads as ok again. */
  answered(position: number, nowMs: number): void {
    const e = this.entries[position]!;
    if (e.sidelinedUntilMs > nowMs || e.health.state === 'ok') return;
    e.health.state = 'ok';
    e.health.reason = null;
    e.health.sidelinedUntil = null;
  }

  health(): ProviderHealth[] {
    return this.entries.map((e) => ({ ...e.health }));
  }
}

const books = new Map<string, ProviderBook>();

/** Told of every report: rail, environment, 1-based position, state, and whether it starts a sideline (a failover). */
export type ProviderReportListener = (rail: string, environment: string, position: number, state: Exclude<ProviderState, 'ok'>, sidelined: boolean) => void;
let reportListener: ProviderReportListener | undefined;

/** The process's one listener to provider reports (its metrics: runtime/metrics.ts); a later one replaces it. */
export function onProviderReport(listener: ProviderReportListener | undefined): void {
  reportListener = listener;
}

/** The book of a rail in an environment for these URLs, kept for the life of the process. */
export function providerBook(rail: string, environment: string, urls: readonly string[], logger?: Pick<Logger, 'warn' | 'info'>): ProviderBook {
  const key = `${rail}/${environment}`;
  let book = books.get(key);
  if (!book || !book.serves(urls)) books.set(key, (book = new ProviderBook(rail, environment, urls, logger)));
  return book;
}

/** Every rail's providers as this process last found them (readiness, dashboards, tests). */
export function providerHealth(): RailProviderHealth[] {
  return [...books.values()].map((b) => ({ rail: b.rail, environment: b.environment, providers: b.health() }));
}

/** Forgets every book (tests that reuse a rail with other providers). */
export function forgetProviderHealth(): void {
  books.clear();
}
