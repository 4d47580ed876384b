import { describe, expect, it } from '@jest/globals';
import type { C2bPayment } from '../../emulators/daraja/c2b.js';
import { formatPullDate, parsePullDate, queryPull, registerPull, type PullRegistration } from '../../emulators/daraja/pull.js';
import { parsePullAnswer, pullAgreesWith, pullDate } from '../../rails/mpesa/pull.js';
import { pullWindow } from '../../services/mpesa/c2b-pull.js';

const now = new Date('2026-11-28T10:00:00Z');
const payment = (transId: string, hoursAgo: number, extra: Partial<C2bPayment> = {}): C2bPayment => ({
  transId, shortCode: '600100', commandId: 'CustomerPayBillOnline', amount: '10.00', msisdn: '254708374149', billRef: 'REF', outcome: 'completed',
  validation: null, deliveries: [], confirmation: { MSISDN: '25470****149' }, paidAtMs: now.getTime() - hoursAgo * 3600_000, ...extra,
});
const registered = new Map<string, PullRegistration>([['600100', { shortCode: '600100', nominatedNumber: '254708374149', callbackUrl: 'http://x.test/n' }]]);
const query = (b: Record<string, unknown>, payments: C2bPayment[], pageSize = 2) => queryPull(registered, payments, { ShortCode: '600100', ...b }, now, pageSize);

describe('the emulator\'s Pull Transactions', () => {
  it('dates are Kenyan time, YYYY-MM-DD HH:mm:ss, both ways', () => {
    expect(formatPullDate(now)).toBe('2026-11-28 13:00:00');
    expect(pullDate(now)).toBe('2026-11-28 13:00:00');
    expect(parsePullDate('2026-11-28 13:00:00')).toEqual(now);
    expect(parsePullDate('2026-02-30 10:00:00')).toBeNull();
    expect(parsePullDate('20261128130000')).toBeNull();
  });

  it('register wants RequestType Pull, a nominated number and a callback URL', () => {
    const regs = new Map<string, PullRegistration>();
    const merchants = [{ shortCode: '600100' }] as never;
    expect(registerPull(merchants, regs, { ShortCode: '600100', RequestType: 'Pull', NominatedNumber: '254708374149', CallBackURL: 'https://x.test/n' })).toMatchObject({ status: 200, body: { ResponseStatus: '1000' } });
    expect(regs.has('600100')).toBe(true);
    expect(registerPull(merchants, regs, { ShortCode: '600100', RequestType: 'Push', NominatedNumber: '254708374149', CallBackURL: 'https://x.test/n' }).status).toBe(400);
    expect(registerPull(merchants, regs, { ShortCode: '600999', RequestType: 'Pull', NominatedNumber: '254708374149', CallBackURL: 'https://x.test/n' }).status).toBe(500);
  });

  it('pages by OffSetValue, oldest first, and lists only completed payments of the shortcode within the window', () => {
    const payments = [payment('AAA0000003', 1), payment('AAA0000001', 3), payment('AAA0000002', 2), payment('REFUSED001', 2, { outcome: 'refused' }), payment('OTHER00001', 2, { shortCode: '600200' })];
    const window = { StartDate: formatPullDate(new Date(now.getTime() - 24 * 3600_000)), EndDate: formatPullDate(now) };
    const ids = (r: { body: unknown }) => ((r.body as { Response: { transactionId: string }[][] }).Response[0] ?? []).map((x) => x.transactionId);
    expect(ids(query({ ...window, OffSetValue: '0' }, payments))).toEqual(['AAA0000001', 'AAA0000002']);
    expect(ids(query({ ...window, OffSetValue: '2' }, payments))).toEqual(['AAA0000003']);
    expect(ids(query({ ...window, OffSetValue: '4' }, payments))).toEqual([]);
    const record = (query({ ...window, OffSetValue: '2' }, payments).body as { Response: Record<string, string>[][] }).Response[0]![0];
    expect(Object.keys(record!).sort()).toEqual(['amount', 'billreference', 'msisdn', 'organizationname', 'sender', 'transactionId', 'transactiontype', 'trxDate'].sort());
    expect(record).toMatchObject({ amount: '10', billreference: 'REF', trxDate: '2026-11-28 12:00:00', transactiontype: 'c2b-pay-bill-debit' });
  });

  it('refuses a StartDate beyond 48 hours and an unregistered shortcode; lists what is within reach', () => {
    const payments = [payment('OLD0000001', 49), payment('NEW0000001', 47)];
    expect(query({ StartDate: formatPullDate(new Date(now.getTime() - 49 * 3600_000)), EndDate: formatPullDate(now), OffSetValue: '0' }, payments).status).toBe(400);
    const inReach = query({ StartDate: formatPullDate(new Date(now.getTime() - 47.5 * 3600_000)), EndDate: formatPullDate(now), OffSetValue: '0' }, payments);
    expect((inReach.body as { Response: { transactionId: string }[][] }).Response[0]!.map((r) => r.transactionId)).toEqual(['NEW0000001']);
    expect(queryPull(new Map(), payments, { ShortCode: '600100', StartDate: formatPullDate(now), EndDate: formatPullDate(now), OffSetValue: '0' }, now, 2).status).toBe(400);
  });
});

describe('reading Pull Transactions answers', () => {
  it('takes the nested Response list; an empty window is no records; a non-success code is a problem', () => {
    const rec = { transactionId: 'ABC1234567', trxDate: '2026-11-28 12:00:00', msisdn: '2547****149', sender: 'MPESA', transactiontype: 'c2b-pay-bill-debit', billreference: 'REF', amount: '10', organizationname: 'X' };
    expect(parsePullAnswer({ ResponseCode: '1000', ResponseMessage: 'Success', Response: [[rec, { transactionId: 'bad' }]] })).toMatchObject({ ok: true, records: [rec], malformed: [{ transactionId: 'bad' }] });
    expect(parsePullAnswer({ ResponseCode: '1000', Response: [[]] })).toEqual({ ok: true, records: [], malformed: [] });
    expect(parsePullAnswer({ ResponseCode: '1001', ResponseMessage: 'No transactions' })).toMatchObject({ ok: false });
  });

  it('a pulled record agrees with a confirmation only on TransID, whole-shilling amount, shortcode and reference', () => {
    const rec = { transactionId: 'ABC1234567', amount: '80', billreference: 'ref1' };
    const row = { trans_id: 'ABC1234567', amount: '80.00', shortcode: '600100', bill_ref: 'REF1' };
    expect(pullAgreesWith(rec, row, '600100')).toBe(true);
    expect(pullAgreesWith({ ...rec, amount: '800' }, row, '600100')).toBe(false);
    expect(pullAgreesWith({ ...rec, billreference: 'REF2' }, row, '600100')).toBe(false);
    expect(pullAgreesWith(rec, row, '600200')).toBe(false);
  });

  it('each window overlaps the previous one by an hour and never reaches past 48 hours', () => {
    expect(pullWindow(now, null).start.getTime()).toBe(now.getTime() - 48 * 3600_000 + 10 * 60_000);
    expect(pullWindow(now, new Date(now.getTime() - 15 * 60_000).toISOString()).start.getTime()).toBe(now.getTime() - 75 * 60_000);
    expect(pullWindow(now, new Date(now.getTime() - 72 * 3600_000).toISOString()).start.getTime()).toBe(now.getTime() - 48 * 3600_000 + 10 * 60_000);
  });
});
