import { randomBytes } from 'node:crypto';
import { nairobiNow } from './checks.js';
import type { EmulatorMerchant } from './state.js';
import { newRequestId } from './state.js';
import { errorBody } from './templates.js';

/**
 * The emulator's C2B side (paybill and till payments made from the M-Pesa menu): Register URL
 * (v1 and v2), Simulate, and the validation-then-confirmation posts to the registered URLs, in
 * Daraja's documented shapes. Tests script what happens to a confirmation (C2bScript).
 */
export interface C2bRegistration {
  shortCode: string;
  responseType: 'Completed' | 'Cancelled';
  confirmationUrl: string;
  validationUrl: string;
  version: 'v1' | 'v2';
}

/** How the next confirmations are delivered: once, twice, never (only pullable), later, or altered. */
export interface C2bScript {
  confirmation: 'once' | 'duplicate' | 'none';
  delayMs?: number;
  /** Fields replaced in a second, altered post of the same TransID (after the genuine one). */
  alterAfter?: Record<string, string>;
}

export interface C2bPayment {
  transId: string;
  shortCode: string;
  commandId: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  amount: string;
  msisdn: string;
  billRef: string;
  /** 'refused': the validation URL answered a non-zero ResultCode; 'completed' otherwise. */
  outcome: 'completed' | 'refused';
  validation: { status: number | null; body: unknown } | null;
  deliveries: { status: number | null; body?: unknown }[];
  /** The confirmation body as M-Pesa posts it (Pull Transactions lists the same payment). */
  confirmation: Record<string, string>;
  /** When M-Pesa completed it (ms since the epoch): what Pull Transactions' dates select on. */
  paidAtMs: number;
}

const forbidden = ['mpesa', 'm-pesa', 'safaricom', 'exe', 'cmd', 'sql', 'query'];
const refusal = (status: number, code: string, message: string) => ({ status, body: errorBody(newRequestId(), code, message) });

/** POST /mpesa/c2b/{v1,v2}/registerurl. */
export function registerUrl(
  merchants: EmulatorMerchant[],
  registrations: Map<string, C2bRegistration>,
  b: Record<string, unknown>,
  version: 'v1' | 'v2',
): { status: number; body: unknown } {
  const shortCode = typeof b.ShortCode === 'string' || typeof b.ShortCode === 'number' ? String(b.ShortCode) : '';
  if (!/^\d{5,7}$/.test(shortCode)) return refusal(400, '400.002.02', 'Bad Request - Invalid ShortCode');
  if (!merchants.some((m) => m.shortCode === shortCode || (m.tills ?? []).includes(shortCode))) return refusal(500, '500.003.1001', 'Merchant does not exist');
  if (b.ResponseType !== 'Completed' && b.ResponseType !== 'Cancelled') return refusal(400, '400.002.02', 'Bad Request - Invalid ResponseType');
  for (const field of ['ConfirmationURL', 'ValidationURL'] as const) {
    const url = b[field];
    let parsed: URL | null = null;
    try {
      parsed = typeof url === 'string' ? new URL(url) : null;
    } catch {
      parsed = null;
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || forbidden.some((w) => (url as string).toLowerCase().includes(w))) {
      return refusal(400, '400.002.02', `Bad Request - Invalid ${field}`);
    }
  }
  registrations.set(shortCode, {
    shortCode, responseType: b.ResponseType, confirmationUrl: b.ConfirmationURL as string, validationUrl: b.ValidationURL as string, version,
  });
  return { status: 200, body: { OriginatorCoversationID: `${randomBytes(4).toString('hex')}-${newRequestId()}`, ResponseCode: '0', ResponseDescription: 'Success' } };
}

export interface SimulateInput {
  ShortCode: string;
  CommandID: 'CustomerPayBillOnline' | 'CustomerBuyGoodsOnline';
  Amount: string | number;
  Msisdn: string | number;
  BillRefNumber?: string | null;
}

/** Checks a Simulate body; null when it is well formed. */
export function simulateProblem(b: Record<string, unknown>): string | null {
  if (!/^\d{5,7}$/.test(String(b.ShortCode ?? ''))) return 'Bad Request - Invalid ShortCode';
  if (b.CommandID !== 'CustomerPayBillOnline' && b.CommandID !== 'CustomerBuyGoodsOnline') return 'Bad Request - Invalid CommandID';
  if (!/^\d{1,6}$/.test(String(b.Amount ?? '')) || Number(b.Amount) < 1) return 'Bad Request - Invalid Amount';
  if (!/^2547\d{8}$|^2541\d{8}$/.test(String(b.Msisdn ?? ''))) return 'Bad Request - Invalid Msisdn';
  return null;
}

const upperAlnum = (n: number) => Array.from(randomBytes(n), (x) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'[x % 36]).join('');

/** The confirmation (and validation) body Daraja posts (v2 field set; the MSISDN masked as Daraja masks it). */
export function c2bBody(input: SimulateInput, now: Date, transId = upperAlnum(10)): Record<string, string> {
  const msisdn = String(input.Msisdn);
  return {
    TransactionType: input.CommandID === 'CustomerBuyGoodsOnline' ? 'Buy Goods' : 'Pay Bill',
    TransID: transId,
    TransTime: nairobiNow(now),
    TransAmount: `${Number(input.Amount)}.00`,
    BusinessShortCode: String(input.ShortCode),
    BillRefNumber: input.CommandID === 'CustomerBuyGoodsOnline' ? '' : String(input.BillRefNumber ?? ''),
    InvoiceNumber: '',
    OrgAccountBalance: '',
    ThirdPartyTransID: '',
    MSISDN: `${msisdn.slice(0, 5)}****${msisdn.slice(-3)}`,
    FirstName: 'John',
    MiddleName: '',
    LastName: 'Doe',
  };
}

/** POSTs JSON; the answer's status and body, or a null status when it could not be delivered. */
export async function postTo(url: URL, body: unknown): Promise<{ status: number | null; body: unknown }> {
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // kept as text
    }
    return { status: res.status, body: parsed };
  } catch {
    return { status: null, body: null };
  }
}
