import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stkPassword } from '../../rails/mpesa/password.js';
import { darajaTimestamp } from '../../rails/mpesa/time.js';
import { startDarajaEmulator, type DarajaEmulator, type EmulatorMerchant } from '../../emulators/daraja/server.js';

/**
 * The emulator is only worth its name if it refuses what Daraja refuses and answers in Daraja's
 * documented shapes: these tests hold it to the fixtures it is built from.
 */
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../emulators/daraja/fixtures/${name}.json`, import.meta.url), 'utf8'));
const keysOf = (o: Record<string, unknown>) => Object.keys(o).sort();

const paybill: EmulatorMerchant = { consumerKey: 'ck-emu', consumerSecret: 'cs-emu', shortCode: '174379', passkey: 'pk-emu-174379', kind: 'paybill' };
let emulator: DarajaEmulator;
let received: unknown[] = [];
let receiver: Server;
let receiverUrl: string;
let clockMs = Date.parse('2024-07-10T06:15:26Z');

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString()));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ResultCode":0,"ResultDesc":"Accepted"}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb/tok`;
  emulator = await startDarajaEmulator({ merchants: [paybill], tokenTtlSeconds: 3599, now: () => new Date(clockMs) });
});
afterAll(async () => {
  await emulator?.close();
  await new Promise((r) => receiver.close(r));
});

const call = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${emulator.url}${path}`, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const basic = (k: string, s: string) => `Basic ${Buffer.from(`${k}:${s}`).toString('base64')}`;
const token = async () => (await call('/oauth/v1/generate?grant_type=client_credentials', { headers: { authorization: basic('ck-emu', 'cs-emu') } })).body.access_token as string;
const post = (path: string, t: string, body: unknown, contentType = 'application/json') =>
  call(path, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': contentType }, body: JSON.stringify(body) });
const pushBody = (over: Record<string, unknown> = {}) => {
  const ts = darajaTimestamp(new Date(clockMs));
  return {
    BusinessShortCode: 174379, Password: stkPassword('174379', paybill.passkey, ts), Timestamp: ts, TransactionType: 'CustomerPayBillOnline',
    Amount: '1', PartyA: '254708374149', PartyB: '174379', PhoneNumber: '254708374149', CallBackURL: receiverUrl, AccountReference: 'accountref', TransactionDesc: 'txndesc', ...over,
  };
};
const push = '/mpesa/stkpush/v1/processrequest';

describe('Daraja emulator', () => {
  it('issues tokens only for Basic client credentials, in the documented shape', async () => {
    const ok = await call('/oauth/v1/generate?grant_type=client_credentials', { headers: { authorization: basic('ck-emu', 'cs-emu') } });
    expect([ok.status, keysOf(ok.body)]).toEqual([200, keysOf(fixture('oauth-success'))]);
    expect(ok.body.expires_in).toBe('3599');
    const cases: [string, Record<string, string>, string][] = [
      ['?grant_type=client_credentials', { authorization: basic('ck-emu', 'wrong') }, '400.008.01'],
      ['?grant_type=client_credentials', { authorization: 'Bearer abc' }, '400.008.01'],
      ['?grant_type=password', { authorization: basic('ck-emu', 'cs-emu') }, '400.008.02'],
    ];
    for (const [query, headers, code] of cases) {
      const res = await call(`/oauth/v1/generate${query}`, { headers });
      expect([res.status, res.body.errorCode]).toEqual([400, code]);
      expect(keysOf(res.body)).toEqual(['errorCode', 'errorMessage', 'requestId']);
    }
  });

  it('accepts a correct push in the documented shape and calls back with the documented body', async () => {
    const t = await token();
    const res = await post(push, t, pushBody());
    expect([res.status, keysOf(res.body)]).toEqual([200, keysOf(fixture('stkpush-success-response'))]);
    expect(res.body.ResponseCode).toBe('0');
    const id = res.body.CheckoutRequestID as string;
    expect(id).toBe(`ws_CO_10072024091526${id.slice(20, 23)}254708374149`);
    received = [];
    await emulator.complete(id, 'success');
    const expected = fixture('callback-success');
    const got = received[0] as typeof expected;
    expect(keysOf(got.Body.stkCallback)).toEqual(keysOf(expected.Body.stkCallback));
    expect(got.Body.stkCallback.CallbackMetadata.Item.map((i: { Name: string }) => i.Name)).toEqual(expected.Body.stkCallback.CallbackMetadata.Item.map((i: { Name: string }) => i.Name));
    expect(got.Body.stkCallback.CallbackMetadata.Item).toContainEqual({ Name: 'TransactionDate', Value: 20240710091526 });
    expect(got.Body.stkCallback.CheckoutRequestID).toBe(id);
  });

  it('refuses what Daraja refuses, with the documented error bodies', async () => {
    const t = await token();
    const ts = (ms: number) => darajaTimestamp(new Date(ms));
    const cases: [Record<string, unknown>, number, string][] = [
      [{ Password: stkPassword('174379', 'wrong', ts(clockMs)) }, 500, 'Wrong credentials'],
      [{ BusinessShortCode: '999999', Password: stkPassword('999999', paybill.passkey, ts(clockMs)) }, 500, 'Merchant does not exist'],
      [{ BusinessShortCode: '17A379' }, 400, 'Bad Request - Invalid BusinessShortCode'],
      // UTC sent as if it were Kenyan time: three hours off.
      [{ Timestamp: new Date(clockMs).toISOString().replace(/\D/g, '').slice(0, 14), Password: stkPassword('174379', paybill.passkey, new Date(clockMs).toISOString().replace(/\D/g, '').slice(0, 14)) }, 400, 'Bad Request - Invalid Timestamp'],
      [{ Timestamp: '2024-07-10 09:15' }, 400, 'Bad Request - Invalid Timestamp'],
      [{ Amount: '1.5' }, 400, 'Bad Request - Invalid Amount'],
      [{ Amount: 250001 }, 400, 'Bad Request - Invalid Amount'],
      [{ PhoneNumber: '0708374149' }, 400, 'Bad Request - Invalid PhoneNumber'],
      [{ CallBackURL: 'https://example.com/ cb' }, 400, 'Bad Request - Invalid CallBackURL'],
      [{ AccountReference: 'thirteen-char' }, 400, 'Bad Request - Invalid AccountReference'],
      [{ TransactionDesc: 'fourteen chars' }, 400, 'Bad Request - Invalid TransactionDesc'],
      [{ AccountReference: null }, 400, 'Bad Request - Invalid Remarks'],
      [{ TransactionType: 'CustomerPayBill' }, 400, 'Bad Request - Invalid TransactionType'],
    ];
    for (const [over, status, message] of cases) {
      const res = await post(push, t, pushBody(over));
      expect({ over, status: res.status, message: res.body.errorMessage }).toEqual({ over, status, message });
      expect(keysOf(res.body)).toEqual(keysOf(fixture('stkpush-error-wrong-credentials')));
    }
    const plain = await post(push, t, pushBody(), 'text/plain');
    expect(plain.body.errorMessage).toBe('Bad Request - Invalid BusinessShortCode');
    expect((await post(push, 'not-a-token', pushBody())).body).toMatchObject({ errorCode: '404.001.03', errorMessage: 'Invalid Access Token' });
  });

  it('expires tokens and invalidates the previous token of an app when a new one is issued', async () => {
    const first = await token();
    const second = await token();
    expect((await post(push, first, pushBody({ PhoneNumber: '254700000101', PartyA: '254700000101' }))).status).toBe(404);
    clockMs += 3600_000;
    expect((await post(push, second, pushBody({ PhoneNumber: '254700000102', PartyA: '254700000102' }))).body.errorCode).toBe('404.001.03');
  });

  it('locks a phone while its prompt is open, and answers queries as pending, final or unknown', async () => {
    const t = await token();
    const phone = { PhoneNumber: '254700000201', PartyA: '254700000201' };
    const id = (await post(push, t, pushBody(phone))).body.CheckoutRequestID as string;
    expect((await post(push, t, pushBody(phone))).body.errorMessage).toBe(fixture('stkpush-error-subscriber-locked').errorMessage);
    const ts = darajaTimestamp(new Date(clockMs));
    const query = (checkout: string) => post('/mpesa/stkpushquery/v1/query', t, { BusinessShortCode: '174379', Password: stkPassword('174379', paybill.passkey, ts), Timestamp: ts, CheckoutRequestID: checkout });
    const pending = await query(id);
    expect([pending.status, pending.body]).toEqual([500, { ...fixture('stkquery-pending-error'), requestId: id }]);
    emulator.script('254700000201', { result: 'cancelled', callback: 'none' });
    received = [];
    await emulator.complete(id);
    expect(received).toEqual([]);
    const final = await query(id);
    expect([final.status, keysOf(final.body)]).toEqual([200, keysOf(fixture('stkquery-success'))]);
    expect([final.body.ResultCode, final.body.ResultDesc]).toEqual(['1032', 'Request cancelled by user']);
    expect((await query('ws_CO_01012000000000000254700000000')).body.errorMessage).toBe('Bad Request - Invalid CheckoutRequestID');
    expect((await post(push, t, pushBody(phone))).status).toBe(200);
  });

  it('fails a till paid with the paybill transaction type the way Daraja does: accepted, then SFC_IC0003', async () => {
    const store: EmulatorMerchant = { consumerKey: 'ck-emu', consumerSecret: 'cs-emu', shortCode: '300300', passkey: 'till-pk', kind: 'till', tills: ['300301'] };
    emulator.state.merchants.push(store);
    const t = await token();
    const ts = darajaTimestamp(new Date(clockMs));
    const res = await post(push, t, pushBody({ BusinessShortCode: '300300', Password: stkPassword('300300', 'till-pk', ts), PartyB: '300399', PhoneNumber: '254700000301', PartyA: '254700000301' }));
    expect(res.status).toBe(200);
    received = [];
    await emulator.complete(res.body.CheckoutRequestID as string, 'success');
    expect((received[0] as { Body: { stkCallback: Record<string, unknown> } }).Body.stkCallback).toMatchObject({ ResultCode: 'SFC_IC0003', ResultDesc: 'The operator does not exist.' });
  });

  it('registers C2B URLs as Daraja does (forbidden words refused) and posts validation then confirmation after Simulate', async () => {
    const t = await token();
    const register = (over: Record<string, unknown>) =>
      post('/mpesa/c2b/v2/registerurl', t, { ShortCode: '174379', ResponseType: 'Completed', ConfirmationURL: `${receiverUrl}/confirmation`, ValidationURL: `${receiverUrl}/validation`, ...over });
    for (const [over, message] of [
      [{ ConfirmationURL: 'https://shop.example/mpesa/confirmation' }, 'Bad Request - Invalid ConfirmationURL'],
      [{ ValidationURL: 'https://shop.example/cmd/validation' }, 'Bad Request - Invalid ValidationURL'],
      [{ ResponseType: 'Maybe' }, 'Bad Request - Invalid ResponseType'],
    ] as const) {
      const res = await register(over);
      expect([res.status, res.body.errorMessage]).toEqual([400, message]);
    }
    const ok = await register({});
    expect([ok.status, ok.body.ResponseCode, ok.body.ResponseDescription]).toEqual([200, '0', 'Success']);
    received = [];
    const sim = await post('/mpesa/c2b/v1/simulate', t, { ShortCode: '174379', CommandID: 'CustomerPayBillOnline', Amount: 25, Msisdn: '254708374149', BillRefNumber: 'K7M2Q9XD' });
    expect([sim.status, sim.body.ResponseCode]).toEqual([200, '0']);
    const start = Date.now();
    while (received.length < 2 && Date.now() - start < 5_000) await new Promise((r) => setTimeout(r, 50));
    const keys = ['BillRefNumber', 'BusinessShortCode', 'FirstName', 'InvoiceNumber', 'LastName', 'MSISDN', 'MiddleName', 'OrgAccountBalance', 'ThirdPartyTransID', 'TransAmount', 'TransID', 'TransTime', 'TransactionType'];
    expect(received.map((b) => keysOf(b as Record<string, unknown>))).toEqual([keys, keys]);
    expect(received[1]).toMatchObject({ TransactionType: 'Pay Bill', TransAmount: '25.00', BusinessShortCode: '174379', BillRefNumber: 'K7M2Q9XD', MSISDN: '25470****149' });
    expect(emulator.c2bPayments.at(-1)).toMatchObject({ outcome: 'completed', deliveries: [{ status: 200 }] });
  });
});

