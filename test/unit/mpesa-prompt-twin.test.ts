import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { c2bPaidAt, insidePromptWindow, msisdnMayBe, sameMoney } from '../../rails/mpesa/prompt-twin.js';

const phone = '254712345678';

describe('msisdnMayBe: the phone Daraja sent with a C2B payment', () => {
  it('takes the number in full, masked either way, or as its SHA-256', () => {
    expect(msisdnMayBe('254712345678', phone)).toBe(true);
    expect(msisdnMayBe('25471****678', phone)).toBe(true);
    expect(msisdnMayBe('2547 ***** 678', phone)).toBe(true);
    expect(msisdnMayBe(createHash('sha256').update(phone).digest('hex'), phone)).toBe(true);
    expect(msisdnMayBe(createHash('sha256').update(phone).digest('hex').toUpperCase(), phone)).toBe(true);
  });

  it('refuses another phone, a mask that keeps too little, and what is no phone at all', () => {
    expect(msisdnMayBe('254712345679', phone)).toBe(false);
    expect(msisdnMayBe('25471****679', phone)).toBe(false);
    expect(msisdnMayBe('25472****678', phone)).toBe(false);
    expect(msisdnMayBe('254****78', phone)).toBe(false); // five digits left: too few to tell phones apart
    expect(msisdnMayBe('************', phone)).toBe(false);
    expect(msisdnMayBe(createHash('sha256').update('254712345679').digest('hex'), phone)).toBe(false);
    expect(msisdnMayBe(null, phone)).toBe(false);
    expect(msisdnMayBe('', phone)).toBe(false);
    expect(msisdnMayBe('John', phone)).toBe(false);
    expect(msisdnMayBe('25471*2*678', phone)).toBe(false);
    expect(msisdnMayBe('25471****678', 'not-a-phone')).toBe(false);
    // A "mask" as long as the number hides nothing and is no mask.
    expect(msisdnMayBe('2547123*45678', phone)).toBe(false);
  });
});

describe('the prompt window', () => {
  const sent = new Date('2026-11-28T10:00:00Z');
  it('reads TransTime as Kenyan time, else falls back to when the payment was received', () => {
    expect(c2bPaidAt('20261128130100', '2026-11-28T12:00:00Z').toISOString()).toBe('2026-11-28T10:01:00.000Z');
    expect(c2bPaidAt('20261131130100', '2026-11-28T12:00:00Z').toISOString()).toBe('2026-11-28T12:00:00.000Z');
    expect(c2bPaidAt(null, '2026-11-28T12:00:00Z').toISOString()).toBe('2026-11-28T12:00:00.000Z');
  });
  it('spans two minutes before the prompt to fifteen after, edges included', () => {
    expect(insidePromptWindow(sent, new Date('2026-11-28T09:58:00Z'))).toBe(true);
    expect(insidePromptWindow(sent, new Date('2026-11-28T09:57:59.999Z'))).toBe(false);
    expect(insidePromptWindow(sent, new Date('2026-11-28T10:15:00Z'))).toBe(true);
    expect(insidePromptWindow(sent, new Date('2026-11-28T10:15:00.001Z'))).toBe(false);
  });
  it('is the same money only when amount, phone and time all agree', () => {
    const prompt = { checkoutRequestId: 'ws_CO_1', phone, amountKes: 65, sentAt: sent };
    const c2b = { transId: 'TX1', msisdn: '25471****678', amountKes: '65', paidAt: new Date('2026-11-28T10:01:00Z') };
    expect(sameMoney(prompt, c2b)).toBe(true);
    expect(sameMoney(prompt, { ...c2b, amountKes: '66' })).toBe(false);
    expect(sameMoney(prompt, { ...c2b, amountKes: null })).toBe(false);
    expect(sameMoney(prompt, { ...c2b, msisdn: '25471****679' })).toBe(false);
    expect(sameMoney(prompt, { ...c2b, paidAt: new Date('2026-11-28T11:00:00Z') })).toBe(false);
  });
});
