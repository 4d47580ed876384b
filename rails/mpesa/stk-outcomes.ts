import { isPhoneNumber, phoneFormatHint } from '../../domain/phone.js';
import type { JsonAnswer } from './daraja-client.js';
import { classifyDarajaError, type DarajaError } from './daraja-errors.js';
import { mpesaFailureTypes as T, type MpesaFailureType } from './failure-types.js';
import { isSuccessCode, resultReason } from './result-codes.js';
import { maxAmountKes } from './stk-request.js';

/**
 * How M-Pesa's STK answers are read (pure): what a prompt may be sent with, what a refusal means
 * to the customer, and how Daraja's answer to a status query ends the prompt. The activities
 * (activities/mpesa/) turn a failure here into the ApplicationFailure of that type.
 */
export interface StkFailure {
  type: MpesaFailureType;
  message: string;
  /** Only an unavailable or busy Daraja is retried; everything else is final. */
  retryable: boolean;
}

/** Why a prompt can never be sent with this input (a bug in the caller), or null. */
export function stkInputProblem(input: { phoneNumber: string; amountKes: number; linkId: string; attempt: string }): string | null {
  if (!isPhoneNumber(input.phoneNumber)) return `phoneNumber must be ${phoneFormatHint}.`;
  if (!Number.isSafeInteger(input.amountKes) || input.amountKes < 1 || input.amountKes > maxAmountKes) {
    return `amountKes must be whole shillings from 1 to ${maxAmountKes}.`;
  }
  if (!input.attempt || !input.linkId) return 'linkId and attempt are required.';
  return null;
}

/** A final refusal of a prompt (not a busy Daraja): its failure type and what the customer or merchant can do. */
export function stkRefusal(a: DarajaError): { type: MpesaFailureType; message: string } {
  switch (a.kind) {
    case 'credentials':
    case 'invalid_token':
      return { type: T.credentialsRejected, message: `M-Pesa refused the store's credentials: ${a.errorMessage}. Reconnect M-Pesa with the right consumer key, secret, shortcode and passkey.` };
    case 'phone':
      return { type: T.phoneRejected, message: `M-Pesa refused the phone number: ${a.errorMessage}.` };
    case 'subscriber_locked':
      return { type: T.subscriberBusy, message: 'A payment prompt is already open on this phone; answer or cancel it, or wait a minute, then try again.' };
    default:
      return { type: T.rejected, message: `M-Pesa refused the prompt: ${a.errorMessage}.` };
  }
}

export interface StkQueryResult {
  /** `pending`: the prompt is still open; `unknown_request`: Daraja does not know the id. */
  status: 'pending' | 'succeeded' | 'failed' | 'unknown_request';
  resultCode: string | null;
  /** Our readable reason for a failure (rails/mpesa/result-codes.ts). */
  reason: string | null;
}

/** Daraja's answer to an STK status query: how the prompt ended, or the failure to raise (credentials refused; busy or not understood, retried). */
export function interpretQueryAnswer(answer: JsonAnswer): { result: StkQueryResult } | { failure: StkFailure } {
  const b = answer.json as Record<string, unknown> | undefined;
  if (answer.status === 200 && b && b.ResultCode !== undefined && b.ResultCode !== null) {
    const code = String(b.ResultCode).trim();
    if (isSuccessCode(code)) return { result: { status: 'succeeded', resultCode: code, reason: null } };
    return { result: { status: 'failed', resultCode: code, reason: resultReason(code, typeof b.ResultDesc === 'string' ? b.ResultDesc : undefined).reason } };
  }
  const error = classifyDarajaError(answer.status, answer.json ?? answer.text);
  switch (error.kind) {
    case 'pending':
      return { result: { status: 'pending', resultCode: null, reason: null } };
    case 'unknown_request':
      return { result: { status: 'unknown_request', resultCode: null, reason: null } };
    case 'credentials':
    case 'invalid_token':
      return { failure: { type: T.credentialsRejected, message: `M-Pesa refused the store's credentials: ${error.errorMessage}`, retryable: false } };
    default:
      // Busy, or an answer we do not understand: ask again later rather than guess.
      return { failure: { type: T.unavailable, message: `M-Pesa query failed: ${error.errorMessage}`, retryable: true } };
  }
}
