/**
 * Money as integers of the smallest unit. USDT amounts enter and leave the API as decimal
 * strings (at most 6 decimals) and live as micro-USDT (`bigint`) in between. No floats anywhere.
 */
export const usdtDecimals = 6;
export const maxUsdtMicro = 1_000_000_000n * 1_000_000n;

const decimalPattern = /^(\d+)(?:\.(\d+))?$/;

export class MoneyError extends Error {}

/** Parses "10", "10.5", "0.000001" into micro-USDT; refuses exponents, signs and > 6 decimals. */
export function parseUsdt(value: string): bigint {
  const m = decimalPattern.exec(value);
  if (!m) throw new MoneyError('must be a decimal string such as "10" or "10.50", without sign or exponent');
  const frac = m[2] ?? '';
  if (frac.length > usdtDecimals) throw new MoneyError(`must have at most ${usdtDecimals} decimals`);
  const micro = BigInt(m[1]!) * 1_000_000n + BigInt(frac.padEnd(usdtDecimals, '0') || '0');
  if (micro <= 0n) throw new MoneyError('must be greater than 0');
  if (micro > maxUsdtMicro) throw new MoneyError('must be at most 1000000000');
  return micro;
}

/** Formats an amount of `decimals` fractional digits without trailing zeros: 10500000n → "10.5". */
export function formatUnits(amount: bigint, decimals: number): string {
  const negative = amount < 0n;
  const abs = negative ? -amount : amount;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const frac = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Fixed six fractional digits, as the invoice shape wants: 10500000n → "10.500000". */
export function formatUsdtFixed(micro: bigint): string {
  const whole = micro / 1_000_000n;
  return `${whole}.${(micro % 1_000_000n).toString().padStart(6, '0')}`;
}

export const formatUsdt = (micro: bigint): string => formatUnits(micro, usdtDecimals);

/** Converts a token amount of `decimals` digits to micro-USDT, rounding down (never credits dust). */
export function toMicro(amountMinor: bigint, decimals: number): bigint {
  if (decimals === usdtDecimals) return amountMinor;
  if (decimals > usdtDecimals) return amountMinor / 10n ** BigInt(decimals - usdtDecimals);
  return amountMinor * 10n ** BigInt(usdtDecimals - decimals);
}

/** Micro-USDT to a token's smallest unit (BSC USDT has 18 decimals). */
export function fromMicro(micro: bigint, decimals: number): bigint {
  if (decimals >= usdtDecimals) return micro * 10n ** BigInt(decimals - usdtDecimals);
  return micro / 10n ** BigInt(usdtDecimals - decimals);
}

/** A rate such as "129.5" KES per USDT, as an integer of micro-KES per USDT. */
export function parseRate(rate: string): bigint {
  const m = decimalPattern.exec(rate);
  if (!m || (m[2]?.length ?? 0) > 6) throw new MoneyError(`not a rate: ${rate}`);
  const v = BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0');
  if (v <= 0n) throw new MoneyError('rate must be positive');
  return v;
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** KES for a USDT amount at a rate, rounded up to whole shillings (M-Pesa takes integers). */
export function usdtToKes(micro: bigint, rate: string): number {
  return Number(ceilDiv(micro * parseRate(rate), 1_000_000n * 1_000_000n));
}

/** USDT for a KES amount at a rate, rounded up to the micro-USDT. */
export function kesToUsdtMicro(kes: number, rate: string): bigint {
  return ceilDiv(BigInt(kes) * 1_000_000n * 1_000_000n, parseRate(rate));
}

/** Whether `received` covers `due` within a tolerance in basis points (100 bps = 1 %). */
export function coversDue(received: bigint, due: bigint, toleranceBps: number): boolean {
  return received * 10_000n >= due * BigInt(10_000 - toleranceBps);
}
