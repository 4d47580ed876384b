import { formatUnits } from './money.js';

/**
 * The KES value of a payment at the time it was counted, pure and exact (docs/reports.md).
 * A KES payment (M-Pesa) is its own value: rate 1, source `KES`. A USDT payment is worth its
 * amount times the KES-per-USDT rate the rates service gave then (`source` names the sources
 * that agreed, e.g. `coingecko+coinbase`, or `fixed-test-rate` in test mode). No rate: no value,
 * and the reason. Nothing is rounded here: the value keeps every digit of amount × rate.
 */
export type KesAtCount =
  | { kesValue: string; rate: string; source: string; missingReason: null }
  | { kesValue: null; rate: null; source: null; missingReason: string };

const decimal = /^(\d+)(?:\.(\d+))?$/;

/** `amountMinor` at `decimals` (the rail's unit) times a decimal `rate`, as an exact decimal string. */
export function multiplyDecimal(amountMinor: string, decimals: number, rate: string): string {
  const m = decimal.exec(rate);
  if (!m) throw new Error(`not a decimal rate: ${rate}`);
  const frac = m[2] ?? '';
  return formatUnits(BigInt(amountMinor) * BigInt(m[1]! + frac), decimals + frac.length);
}

export function kesAtCount(
  payment: { currency: string; amountMinor: string; decimals: number },
  rate: { kesPerUsdt: string; source: string } | { unavailable: string },
): KesAtCount {
  if (payment.currency === 'KES') return { kesValue: formatUnits(BigInt(payment.amountMinor), payment.decimals), rate: '1', source: 'KES', missingReason: null };
  if ('unavailable' in rate) return { kesValue: null, rate: null, source: null, missingReason: rate.unavailable };
  return { kesValue: multiplyDecimal(payment.amountMinor, payment.decimals, rate.kesPerUsdt), rate: rate.kesPerUsdt, source: rate.source, missingReason: null };
}

/**
 * Whole shillings, rounded half to even (banker's rounding), from an exact decimal string:
 * "12.5" → "12", "13.5" → "14", "12.51" → "13", "-0.5" → "0". What exports show.
 */
export function roundKesHalfEven(value: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m) throw new Error(`not a decimal: ${value}`);
  const [, sign, whole, frac = ''] = m;
  let n = BigInt(whole!);
  const first = frac.charCodeAt(0) - 48;
  if (frac.length > 0) {
    const restNonZero = /[1-9]/.test(frac.slice(1));
    if (first > 5 || (first === 5 && (restNonZero || n % 2n === 1n))) n += 1n;
  }
  return n === 0n ? '0' : `${sign}${n}`;
}
