import { describe, expect, it } from '@jest/globals';
import { accountRefAlphabet, accountRefLength, displayAccountRef, newAccountRef, normalizeAccountRef } from '../../rails/mpesa/account-ref.js';

const refs = Array.from({ length: 300 }, () => newAccountRef());

describe('M-Pesa account references', () => {
  it('are 8 characters of a 31-symbol alphabet without look-alikes, and carry a valid check character', () => {
    expect(accountRefAlphabet).toHaveLength(31);
    expect(accountRefAlphabet).not.toMatch(/[ILOUZ]/);
    for (const ref of refs) {
      expect(ref).toMatch(new RegExp(`^[${accountRefAlphabet}]{${accountRefLength}}$`));
      expect(normalizeAccountRef(ref)).toBe(ref);
    }
    expect(new Set(refs).size).toBe(refs.length);
  });

  it('match however the customer typed them: case, spaces, hyphens, O for 0, I or L for 1', () => {
    const ref = refs.find((r) => r.includes('0') && r.includes('1')) ?? refs[0]!;
    const variants = [
      ref.toLowerCase(),
      displayAccountRef(ref),
      ` ${ref.slice(0, 4)}-${ref.slice(4)} `,
      ref.replace(/0/g, 'O'),
      ref.replace(/0/g, 'o'),
      ref.replace(/1/g, 'I'),
      ref.replace(/1/g, 'l'),
      ref.split('').join(' '),
    ];
    for (const v of variants) expect({ v, got: normalizeAccountRef(v) }).toEqual({ v, got: ref });
  });

  it('refuse every single substitution and every swap of neighbours (the check character)', () => {
    for (const ref of refs.slice(0, 40)) {
      for (let i = 0; i < ref.length; i++) {
        for (const c of accountRefAlphabet) {
          if (c === ref[i]) continue;
          const typo = ref.slice(0, i) + c + ref.slice(i + 1);
          expect({ typo, got: normalizeAccountRef(typo) }).toEqual({ typo, got: null });
        }
        if (i + 1 < ref.length && ref[i] !== ref[i + 1]) {
          const swapped = ref.slice(0, i) + ref[i + 1] + ref[i] + ref.slice(i + 2);
          expect({ swapped, got: normalizeAccountRef(swapped) }).toEqual({ swapped, got: null });
        }
      }
    }
  });

  it('refuse what cannot be a reference', () => {
    for (const bad of ['', 'ABC', `${refs[0]}X`, 'INV-2024-001', 'ZZZZZZZZ', 'UUUUUUUU', refs[0]!.slice(0, 7)]) {
      expect(normalizeAccountRef(bad)).toBeNull();
    }
  });
});
