import { describe, expect, it } from '@jest/globals';
import {
  c2bConfirmationPath, c2bFingerprint, c2bPaymentKey, c2bPostSchema, forbiddenWordIn, newC2bToken, parseC2bPaymentKey, payerName, wholeShillings,
} from '../../rails/mpesa/c2b.js';

const sample = {
  TransactionType: 'Pay Bill', TransID: 'RKTQDM7W6S', TransTime: '20191122063845', TransAmount: '10', BusinessShortCode: '600638',
  BillRefNumber: 'invoice008', InvoiceNumber: '', OrgAccountBalance: '', ThirdPartyTransID: '', MSISDN: '25470****149',
  FirstName: 'John', MiddleName: '', LastName: 'Doe',
};

describe('Daraja C2B wire formats', () => {
  it("reads Daraja's documented confirmation body, numbers or strings, keeping unknown fields", () => {
    const parsed = c2bPostSchema.parse({ ...sample, TransAmount: 10, BusinessShortCode: 600638, NewField: 'x' });
    expect(parsed).toMatchObject({ TransID: 'RKTQDM7W6S', TransAmount: '10', BusinessShortCode: '600638', NewField: 'x' });
    expect(payerName(parsed)).toBe('John Doe');
    for (const bad of [{ TransID: 'x' }, { TransAmount: '-1' }, { TransAmount: '1e3' }, { BusinessShortCode: 'abc' }]) {
      expect(c2bPostSchema.safeParse({ ...sample, ...bad }).success).toBe(false);
    }
  });

  it('counts whole shillings only', () => {
    expect(['10', '10.00', '10.0', '0010'].map(wholeShillings)).toEqual(['10', '10', '10', '10']);
    expect(['10.50', '10.01', 'abc'].map(wholeShillings)).toEqual([null, null, null]);
  });

  it('tells a repeat from an altered post by its fingerprint', () => {
    const a = c2bPostSchema.parse(sample);
    expect(c2bFingerprint(c2bPostSchema.parse({ ...sample, TransAmount: '10.00', FirstName: 'JOHN' }))).toBe(c2bFingerprint(a));
    expect(c2bFingerprint(c2bPostSchema.parse({ ...sample, TransAmount: '1000' }))).not.toBe(c2bFingerprint(a));
    expect(c2bFingerprint(c2bPostSchema.parse({ ...sample, BillRefNumber: 'other' }))).not.toBe(c2bFingerprint(a));
  });

  it("keeps Daraja's forbidden words out of the URLs, tokens included", () => {
    expect(['https://pay.example/mpesa/x', 'https://M-PESA.example', 'https://x/Safaricom', 'https://x/exec', 'https://x/cmd', 'https://x/SQL', 'https://x/query'].map(forbiddenWordIn))
      .toEqual(['mpesa', 'm-pesa', 'safaricom', 'exe', 'cmd', 'sql', 'query']);
    expect(forbiddenWordIn(`https://pay.example${c2bConfirmationPath('a'.repeat(40))}`)).toBeNull();
    for (let i = 0; i < 2000; i++) expect(forbiddenWordIn(newC2bToken())).toBeNull();
  });

  it('names a C2B payment by shortcode and TransID, and reads the name back', () => {
    expect(parseC2bPaymentKey(c2bPaymentKey('600638', 'RKTQDM7W6S'))).toEqual({ shortcode: '600638', transId: 'RKTQDM7W6S' });
    expect(parseC2bPaymentKey('ws_CO_123')).toBeNull();
    expect(parseC2bPaymentKey('c2b:600638:bad id')).toBeNull();
  });
});
