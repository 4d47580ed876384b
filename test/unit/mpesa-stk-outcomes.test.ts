import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { classifyDarajaError } from '../../rails/mpesa/daraja-errors.js';
import { mpesaFailureTypes as T } from '../../rails/mpesa/failure-types.js';
import { interpretQueryAnswer, stkInputProblem, stkRefusal } from '../../rails/mpesa/stk-outcomes.js';
import { maxAmountKes } from '../../rails/mpesa/stk-request.js';

/** Daraja's documented bodies, kept beside the emulator that serves them. */
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../emulators/daraja/fixtures/${name}.json`, import.meta.url), 'utf8'));
const answer = (status: number, json: unknown) => ({ status, json, text: JSON.stringify(json) });

describe('what an STK prompt may be sent with', () => {
  const good = { phoneNumber: '254708374149', amountKes: 130, linkId: 'pl_1', attempt: 'a1' };

  it('accepts a Kenyan number and whole shillings within the limit', () => {
    expect(stkInputProblem(good)).toBeNull();
    expect(stkInputProblem({ ...good, amountKes: maxAmountKes })).toBeNull();
  });

  it('refuses a bad phone, fractional, zero or too large amounts, and a missing link or attempt', () => {
    expect(stkInputProblem({ ...good, phoneNumber: '0708374149x' })).toMatch(/^phoneNumber must be/);
    for (const amountKes of [0, 1.5, maxAmountKes + 1, Number.NaN]) expect(stkInputProblem({ ...good, amountKes })).toMatch(/^amountKes must be whole shillings/);
    expect(stkInputProblem({ ...good, attempt: '' })).toBe('linkId and attempt are required.');
    expect(stkInputProblem({ ...good, linkId: '' })).toBe('linkId and attempt are required.');
  });
});

describe('a refused prompt', () => {
  it('names what the merchant or customer can do, by the kind of refusal', () => {
    expect(stkRefusal(classifyDarajaError(500, fixture('stkpush-error-wrong-credentials'))).type).toBe(T.credentialsRejected);
    expect(stkRefusal(classifyDarajaError(404, fixture('stkpush-error-invalid-access-token'))).type).toBe(T.credentialsRejected);
    expect(stkRefusal(classifyDarajaError(400, fixture('stkpush-error-invalid-phonenumber'))).type).toBe(T.phoneRejected);
    const locked = stkRefusal(classifyDarajaError(500, fixture('stkpush-error-subscriber-locked')));
    expect(locked).toEqual({ type: T.subscriberBusy, message: expect.stringMatching(/already open on this phone/) });
    expect(stkRefusal(classifyDarajaError(400, fixture('stkpush-error-invalid-callbackurl'))).type).toBe(T.rejected);
  });
});

describe("Daraja's answer to an STK status query", () => {
  it('reads a success and a failure ResultCode, with our reason for the failure', () => {
    expect(interpretQueryAnswer(answer(200, fixture('stkquery-success')))).toEqual({ result: { status: 'succeeded', resultCode: '0', reason: null } });
    const cancelled = interpretQueryAnswer(answer(200, { ...fixture('stkquery-success'), ResultCode: '1032', ResultDesc: 'Request cancelled by user' }));
    expect(cancelled).toEqual({ result: { status: 'failed', resultCode: '1032', reason: expect.stringMatching(/cancelled the prompt.*1032/) } });
  });

  it('reads "being processed" as pending and an unknown CheckoutRequestID as unknown_request', () => {
    expect(interpretQueryAnswer(answer(500, fixture('stkquery-pending-error')))).toEqual({ result: { status: 'pending', resultCode: null, reason: null } });
    const unknown = answer(400, { requestId: 'r', errorCode: '400.002.02', errorMessage: 'Bad Request - Invalid CheckoutRequestID' });
    expect(interpretQueryAnswer(unknown)).toEqual({ result: { status: 'unknown_request', resultCode: null, reason: null } });
  });

  it('fails for good on refused credentials, and retries when Daraja is busy or not understood', () => {
    expect(interpretQueryAnswer(answer(500, fixture('stkpush-error-wrong-credentials')))).toEqual({ failure: expect.objectContaining({ type: T.credentialsRejected, retryable: false }) });
    expect(interpretQueryAnswer(answer(429, fixture('stkpush-error-spike-arrest')))).toEqual({ failure: expect.objectContaining({ type: T.unavailable, retryable: true }) });
    expect(interpretQueryAnswer({ status: 502, json: undefined, text: '<html>bad gateway</html>' })).toEqual({ failure: expect.objectContaining({ type: T.unavailable, retryable: true }) });
  });
});
