import { describe, expect, it } from '@jest/globals';
import { checkPhoneNumber } from '../../domain/phone.js';

describe('phone numbers', () => {
  it.each(['254712345678', '254110000000', '254708374149'])('accepts %s', (phone) => {
    expect(checkPhoneNumber(phone)).toEqual({ ok: true, phone });
  });

  it.each([
    ['0712345678', 'Did you mean 254712345678?'],
    ['+254712345678', 'Did you mean 254712345678?'],
    ['25471234567', ''],
    ['2547123456789', ''],
    ['255712345678', ''],
    ['254 712 345 678', 'Did you mean 254712345678?'],
    ['', ''],
  ])('refuses %p and shows the expected format', (phone, hint) => {
    const result = checkPhoneNumber(phone);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain('254 followed by nine digits');
    expect(result.message).toContain('e.g. 254712345678');
    if (hint) expect(result.message).toContain(hint);
  });
});
