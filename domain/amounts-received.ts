import { formatUnits } from './money.js';

/**
 * What a link received in each currency, pure: the sum of its confirmed payments (every
 * disposition, over, late, duplicate and after-cancel included: money that arrived), each in its
 * own currency and at the decimals of its currency. USDT is always present (`"0"` when nothing
 * came in USDT); another currency (KES) appears once a payment in it was confirmed. Rails report
 * USDT at different decimals (18 on BSC, 6 elsewhere): each amount is summed exactly at the
 * largest decimals seen, then printed without trailing zeros. Money is never a float.
 *
 * The currency and decimals of a payment come from its rail's facts (rails/registry.ts
 * `linkRailTerms`); this function does not know rails.
 */
export interface ReceivedPayment {
  currency: string;
  state: string;
  /** The rail's smallest unit, as a decimal integer string (null: not known yet). */
  amountMinor: string | null;
  decimals: number | null;
}

export type AmountsReceived = { USDT: string } & Record<string, string>;

export function amountsReceived(payments: Iterable<ReceivedPayment>): AmountsReceived {
  const sums = new Map<string, { minor: bigint; decimals: number }>([['USDT', { minor: 0n, decimals: 0 }]]);
  for (const p of payments) {
    if (p.state !== 'confirmed' || p.amountMinor === null || p.decimals === null) continue;
    const sum = sums.get(p.currency) ?? { minor: 0n, decimals: 0 };
    const decimals = Math.max(sum.decimals, p.decimals);
    const minor = sum.minor * 10n ** BigInt(decimals - sum.decimals) + BigInt(p.amountMinor) * 10n ** BigInt(decimals - p.decimals);
    sums.set(p.currency, { minor, decimals });
  }
  const out: Record<string, string> = {};
  for (const [currency, s] of sums) out[currency] = formatUnits(s.minor, s.decimals);
  return out as AmountsReceived;
}
