import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { interpretCallback, stkCallbackSchema, wholeShillings } from '../../rails/mpesa/callback.js';
import { classifyDarajaError } from '../../rails/mpesa/daraja-errors.js';
import { businessShortCode, transactionType, type MpesaMerchant } from '../../rails/mpesa/merchant.js';
import { stkPassword } from '../../rails/mpesa/password.js';
import { resultReason } from '../../rails/mpesa/result-codes.js';
import { accountReference, buildStkPushBody, transactionDesc } from '../../rails/mpesa/stk-request.js';
import { darajaTimestamp, parseDarajaTimestamp } from '../../rails/mpesa/time.js';

/** Daraja's documented bodies, kept beside the emulator that serves them. */
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../emulators/daraja/fixtures/${name}.json`, import.meta.url), 'utf8'));
const sandboxPasskey = 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919';
const paybill: MpesaMerchant = { shortcode: '174379', shortcodeType: 'paybill', storeNumber: null };
const till: MpesaMerchant = { shortcode: '5512345', shortcodeType: 'till', storeNumber: '551230' };

describe('Password and Timestamp', () => {
  it("reproduces the Password of Safaricom's own sample request", () => {
    const sample = fixture('stkpush-request-example');
    expect(stkPassword(String(sample.BusinessShortCode), sandboxPasskey, sample.Timestamp)).toBe(sample.Password);
  });

  it('writes Kenyan time (UTC+3) whatever the host time zone, across the date line', () => {
    expect(darajaTimestamp(new Date('2021-06-28T06:24:08Z'))).toBe('20210628092408');
    expect(darajaTimestamp(new Date('2024-12-31T21:30:05.999Z'))).toBe('20250101003005');
  });

  it('reads TransactionDate (a number in callbacks) as Kenyan time, and refuses impossible dates', () => {
    expect(parseDarajaTimestamp(20191219102115)?.toISOString()).toBe('2019-12-19T07:21:15.000Z');
    expect(parseDarajaTimestamp('20250101003005')?.toISOString()).toBe('2024-12-31T21:30:05.000Z');
    for (const bad of ['20240230120000', '2024123112000', 'abc', 20241301000000]) expect(parseDarajaTimestamp(bad)).toBeNull();
  });
});

describe('STK push request', () => {
  const base = { passkey: sandboxPasskey, now: new Date('2021-06-28T06:24:08Z'), amountKes: 1, phoneNumber: '254722000000', callbackUrl: 'https://pay.example/v1/callbacks/mpesa/abc', accountReference: 'accountref', description: 'txndesc' };

  it("matches the documented sample for a paybill, field for field", () => {
    const sample = fixture('stkpush-request-example');
    const body = buildStkPushBody({ ...base, merchant: paybill });
    expect(body).toEqual({ ...sample, BusinessShortCode: '174379', PhoneNumber: '254722000000', CallBackURL: base.callbackUrl });
  });

  it('pays a till at the till number, as its store number, with CustomerBuyGoodsOnline', () => {
    const body = buildStkPushBody({ ...base, merchant: till });
    expect([body.BusinessShortCode, body.PartyB, body.TransactionType]).toEqual(['551230', '5512345', 'CustomerBuyGoodsOnline']);
    expect(Buffer.from(body.Password, 'base64').toString()).toBe(`551230${sandboxPasskey}20210628092408`);
    expect([businessShortCode(paybill), transactionType(paybill)]).toEqual(['174379', 'CustomerPayBillOnline']);
  });

  it('keeps AccountReference (12) and TransactionDesc (13) within Daraja limits and never empty', () => {
    expect(accountReference('pl_3k9xabcdefghijklmnop')).toBe('pl3k9xabcdef');
    expect(accountReference('INV-2024/07#1')).toBe('INV2024071');
    expect(accountReference('@#&')).toBe('Payment');
    expect(transactionDesc('Order 1234 for Jane')).toBe('Order 1234 fo');
    expect(transactionDesc('')).toBe('Payment');
  });

  it('takes whole shillings from 1 to 250,000 only', () => {
    for (const amountKes of [0, 1.5, 250_001, -3]) expect(() => buildStkPushBody({ ...base, merchant: paybill, amountKes })).toThrow(RangeError);
    expect(buildStkPushBody({ ...base, merchant: paybill, amountKes: 250_000 }).Amount).toBe('250000');
  });
});

describe('Daraja answers', () => {
  it.each([
    ['stkpush-error-invalid-access-token', 404, 'invalid_token'],
    ['stkpush-error-wrong-credentials', 500, 'credentials'],
    ['stkpush-error-merchant-not-exist', 500, 'credentials'],
    ['stkpush-error-invalid-shortcode', 400, 'credentials'],
    ['stkpush-error-invalid-phonenumber', 400, 'phone'],
    ['stkpush-error-subscriber-locked', 500, 'subscriber_locked'],
    ['stkpush-error-spike-arrest', 500, 'busy'],
    ['stkpush-error-invalid-callbackurl', 400, 'invalid_request'],
    ['stkpush-error-invalid-timestamp', 400, 'invalid_request'],
    ['stkquery-pending-error', 500, 'pending'],
  ])('%s is %s', (name, status, kind) => {
    expect(classifyDarajaError(status as number, fixture(name as string)).kind).toBe(kind);
  });

  it('reads gateway faults that are not Daraja JSON', () => {
    expect(classifyDarajaError(503, '<html>Service Unavailable</html>').kind).toBe('busy');
    expect(classifyDarajaError(400, { requestId: 'x', errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid CheckoutRequestID' }).kind).toBe('unknown_request');
    expect(classifyDarajaError(404, { errorCode: '404.001.01', errorMessage: 'Resource not found' }).kind).toBe('unknown');
  });
});

describe('callbacks', () => {
  it('reads the documented success callback: receipt, whole-shilling amount, phone, Kenyan time', () => {
    const body = stkCallbackSchema.parse(fixture('callback-success'));
    expect(interpretCallback(body)).toEqual({
      merchantRequestId: '29115-34620561-1',
      checkoutRequestId: 'ws_CO_191220191020363925',
      resultCode: '0',
      resultDesc: 'The service request is processed successfully.',
      outcome: { kind: 'success', receipt: 'NLJ7RT61SV', amountKes: '1', phone: '254708374149', transactionAt: '2019-12-19T07:21:15.000Z' },
    });
  });

  it.each([
    ['callback-cancelled', '1032', 'cancelled the prompt'],
    ['callback-timeout', '1037', 'could not be reached'],
    ['callback-wrong-pin', '2001', 'PIN entered was wrong'],
    ['callback-insufficient', '1', 'does not cover the amount'],
  ])('maps %s to a readable failure reason', (name, code, text) => {
    const cb = interpretCallback(stkCallbackSchema.parse(fixture(name)));
    expect(cb.outcome).toEqual({ kind: 'failure', resultCode: code, reason: expect.stringContaining(text) });
    expect(cb.outcome.kind === 'failure' && cb.outcome.reason).toContain(`(M-Pesa ${code})`);
  });

  it('takes a string ResultCode, and a success without a receipt is not a payment', () => {
    const till = { Body: { stkCallback: { MerchantRequestID: 'm', CheckoutRequestID: 'c', ResultCode: 'SFC_IC0003', ResultDesc: 'The operator does not exist.' } } };
    expect(interpretCallback(stkCallbackSchema.parse(till)).outcome).toMatchObject({ kind: 'failure', resultCode: 'SFC_IC0003' });
    const noReceipt = fixture('callback-success');
    noReceipt.Body.stkCallback.CallbackMetadata.Item = noReceipt.Body.stkCallback.CallbackMetadata.Item.filter((i: { Name: string }) => i.Name !== 'MpesaReceiptNumber');
    expect(interpretCallback(stkCallbackSchema.parse(noReceipt)).outcome.kind).toBe('unconfirmed');
    expect(resultReason(4242, 'Something new').reason).toBe('M-Pesa did not complete the payment: Something new (M-Pesa 4242)');
  });

  it('validates the envelope strictly', () => {
    const ok = fixture('callback-cancelled');
    expect(stkCallbackSchema.safeParse(ok).success).toBe(true);
    expect(stkCallbackSchema.safeParse({ ...ok, extra: 1 }).success).toBe(false);
    expect(stkCallbackSchema.safeParse({ Body: { stkCallback: { ...ok.Body.stkCallback, CheckoutRequestID: 5 } } }).success).toBe(false);
    expect(stkCallbackSchema.safeParse({ Body: {} }).success).toBe(false);
  });

  it('reads amounts as whole shillings only', () => {
    expect([wholeShillings(1), wholeShillings('1.00'), wholeShillings('250000'), wholeShillings(' 7 ')]).toEqual(['1', '1', '250000', '7']);
    expect([wholeShillings(1.5), wholeShillings('1.50'), wholeShillings('0'), wholeShillings('-1'), wholeShillings(undefined)]).toEqual([null, null, null, null, null]);
  });
});
