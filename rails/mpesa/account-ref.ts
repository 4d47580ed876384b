import { randomInt } from 'node:crypto';

/**
 * Account references for paybill payments: what a customer types after "Account number" in the
 * M-Pesa menu, often on a feature phone, often read aloud by a cashier. Eight characters from a
 * 31-symbol alphabet (Crockford's base 32 without U and Z: no I, L, O, U, and no Z that reads as
 * 2), the last one a check character. 31 is prime, so the weighted check sum catches every
 * single substitution and every swap of two neighbours: a typo is refused instead of crediting
 * another link. Seven free symbols give 31^7 ≈ 2.75e10 references per store.
 */
export const accountRefAlphabet = '0123456789ABCDEFGHJKMNPQRSTVWXY';
export const accountRefLength = 8;
const base = accountRefAlphabet.length;

const valueOf = (c: string): number => accountRefAlphabet.indexOf(c);

/** Position i (0-based) weighs i + 1; the check character (weight 8) makes the sum ≡ 0 (mod 31). */
function checkCharacter(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += (i + 1) * valueOf(body[i]!);
  // 8 * 4 = 32 ≡ 1 (mod 31): 4 is the inverse of the check's weight.
  const check = (((base - (sum % base)) % base) * 4) % base;
  return accountRefAlphabet[check]!;
}

/** A fresh reference (cryptographically random: references must not be guessable in sequence). */
export function newAccountRef(): string {
  let body = '';
  for (let i = 0; i < accountRefLength - 1; i++) body += accountRefAlphabet[randomInt(base)];
  return body + checkCharacter(body);
}

/**
 * What a customer typed, as the reference it means, or null when it cannot be one. Forgives case,
 * spaces, hyphens and dots, O for 0 and I or L for 1; the check character must then agree.
 */
export function normalizeAccountRef(typed: string): string | null {
  const cleaned = typed.toUpperCase().replace(/[\s\-._]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  if (cleaned.length !== accountRefLength || [...cleaned].some((c) => valueOf(c) < 0)) return null;
  return checkCharacter(cleaned.slice(0, -1)) === cleaned.slice(-1) ? cleaned : null;
}

/** The reference as shown to people: two groups of four ("K7M2 Q9XD"); typed either way. */
export const displayAccountRef = (ref: string): string => `${ref.slice(0, 4)} ${ref.slice(4)}`;
