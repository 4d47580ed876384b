import { formatUnits, parseRate } from './money.js';

/**
 * The checks a live USDT/KES rate must pass before a KES amount is computed with it (M-Pesa
 * payments confirm on that amount, so one bad source must never set it). Pure: the rate service
 * (services/rates/rate-service.ts) reads the sources and the last good rate, this decides.
 *
 * 1. Each quote must lie in a sane band (e.g. 50–500 KES per USDT).
 * 2. At least two sources must agree: the largest group of quotes whose highest is within
 *    `maxSpreadPercent` of its lowest must have two or more members and be a strict majority of
 *    the sources that answered in band (a tie between two camps says nothing about which is right).
 *    The rate is that group's median.
 * 3. It must not be more than `maxJumpPercent` away from the last good rate of the past hour.
 */
export interface RatePolicy {
  minKesPerUsdt: number;
  maxKesPerUsdt: number;
  maxSpreadPercent: number;
  maxJumpPercent: number;
  /** How long the last good rate bounds the next one. */
  jumpWindowMs: number;
}

export const defaultRatePolicy: RatePolicy = {
  minKesPerUsdt: 50,
  maxKesPerUsdt: 500,
  maxSpreadPercent: 2,
  maxJumpPercent: 10,
  jumpWindowMs: 60 * 60_000,
};

/** One source's answer: a decimal string with at most 6 decimals, or why there is none. */
export type Quote = { source: string; kesPerUsdt: string } | { source: string; error: string };

export type RateVerdict =
  | { ok: true; kesPerUsdt: string; sources: string[]; outliers: string[] }
  | { ok: false; reason: 'no_source' | 'single_source' | 'sources_disagree' | 'jump'; message: string };

const ratio = (a: bigint, b: bigint): number => Number(a) / Number(b);

export function checkQuotes(
  quotes: readonly Quote[],
  policy: RatePolicy,
  lastGood: { kesPerUsdt: string; ageMs: number } | undefined,
): RateVerdict {
  const problems: string[] = [];
  const inBand: { source: string; micro: bigint }[] = [];
  for (const q of quotes) {
    if ('error' in q) {
      problems.push(`${q.source}: ${q.error}`);
      continue;
    }
    const value = Number(q.kesPerUsdt);
    if (value < policy.minKesPerUsdt || value > policy.maxKesPerUsdt) {
      problems.push(`${q.source} said ${q.kesPerUsdt}, outside the accepted ${policy.minKesPerUsdt}–${policy.maxKesPerUsdt} KES per USDT`);
      continue;
    }
    inBand.push({ source: q.source, micro: parseRate(q.kesPerUsdt) });
  }
  const detail = problems.length ? ` (${problems.join('; ')})` : '';
  if (inBand.length === 0) return { ok: false, reason: 'no_source', message: `no rate source gave a usable rate${detail}` };
  if (inBand.length === 1) {
    return { ok: false, reason: 'single_source', message: `only one rate source (${inBand[0]!.source}) gave a usable rate and a rate needs two that agree${detail}` };
  }
  const group = largestAgreeingGroup(inBand, policy.maxSpreadPercent);
  if (group.length < 2 || group.length * 2 <= inBand.length) {
    const said = inBand.map((q) => `${q.source} ${formatUnits(q.micro, 6)}`).join(', ');
    return { ok: false, reason: 'sources_disagree', message: `the rate sources disagree by more than ${policy.maxSpreadPercent}% (${said})${detail}` };
  }
  const median = medianOf(group.map((q) => q.micro));
  if (lastGood && lastGood.ageMs < policy.jumpWindowMs) {
    const previous = parseRate(lastGood.kesPerUsdt);
    const movePercent = Math.abs(ratio(median, previous) - 1) * 100;
    if (movePercent > policy.maxJumpPercent) {
      const minutes = Math.round(lastGood.ageMs / 60_000);
      return {
        ok: false,
        reason: 'jump',
        message: `the rate moved ${movePercent.toFixed(1)}% (to ${formatUnits(median, 6)}) from the last good rate ${lastGood.kesPerUsdt} of ${minutes} min ago, more than the ${policy.maxJumpPercent}% allowed within an hour`,
      };
    }
  }
  const agreeing = new Set(group.map((q) => q.source));
  return {
    ok: true,
    kesPerUsdt: formatUnits(median, 6),
    sources: group.map((q) => q.source),
    outliers: inBand.filter((q) => !agreeing.has(q.source)).map((q) => q.source),
  };
}

/** The largest run of sorted quotes whose highest is within `spreadPercent` of its lowest. */
function largestAgreeingGroup<T extends { micro: bigint }>(quotes: readonly T[], spreadPercent: number): T[] {
  const sorted = [...quotes].sort((a, b) => (a.micro < b.micro ? -1 : a.micro > b.micro ? 1 : 0));
  let best: T[] = [];
  for (let lo = 0, hi = 0; hi < sorted.length; hi++) {
    while ((ratio(sorted[hi]!.micro, sorted[lo]!.micro) - 1) * 100 > spreadPercent) lo++;
    if (hi - lo + 1 > best.length) best = sorted.slice(lo, hi + 1);
  }
  return best;
}

function medianOf(sorted: readonly bigint[]): bigint {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2n;
}
