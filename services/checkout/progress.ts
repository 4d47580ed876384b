import type { LinkPaymentRow } from '../../db/payment-link-repo.js';
import { formatUsdt, toMicro } from '../../domain/money.js';
import type { CheckoutMobileMoneyAttempt } from './view.js';
import { paidByPrompt } from '../../rails/methods.js';

/**
 * How a checkout words an M-Pesa failure: the result code our reason ends with ("… (M-Pesa
 * 1032)", rails/mpesa/result-codes.ts), 'no_outcome' when M-Pesa never said, else 'unknown'.
 * Only the code reaches the page, which has the words in each language.
 */
export function mpesaFailureCode(reason: string | null): string {
  const code = /\(M-Pesa ([A-Za-z0-9_]{1,20})\)\s*$/.exec(reason ?? '')?.[1];
  if (code) return code;
  return /never reported|could not be asked/.test(reason ?? '') ? 'no_outcome' : 'unknown';
}

/** The latest M-Pesa prompt, when it is still open or failed (a confirmed one is the receipt). */
export function mobileMoneyAttempt(payments: readonly LinkPaymentRow[]): CheckoutMobileMoneyAttempt | null {
  const last = payments.filter((p) => paidByPrompt(p.rail)).at(-1);
  if (!last || (last.state !== 'initiated' && last.state !== 'failed')) return null;
  return {
    state: last.state === 'initiated' ? 'waiting' : 'failed',
    phoneEnding: last.payer && /^\d{9,}$/.test(last.payer) ? last.payer.slice(-3) : null,
    failureCode: last.state === 'failed' ? mpesaFailureCode(last.failure_reason) : null,
  };
}

/** The newest on-chain payment still waiting for its depth, with its amount in USDT. */
export function seenDeposit(payments: readonly LinkPaymentRow[]): { rail: string; txHash: string; logIndex: number | null; amount: string } | null {
  const seen = payments.filter((p) => !paidByPrompt(p.rail) && p.state === 'seen').at(-1);
  if (!seen) return null;
  // Chain payments are keyed `<txHash>:<logIndex>` (db/migrations/0002_payment_links.sql).
  const cut = seen.payment_key.lastIndexOf(':');
  const logIndex = cut > 0 ? Number(seen.payment_key.slice(cut + 1)) : NaN;
  const micro = seen.amount_minor && seen.decimals !== null ? toMicro(BigInt(seen.amount_minor), seen.decimals) : 0n;
  return {
    rail: seen.rail,
    txHash: seen.external_id ?? (cut > 0 ? seen.payment_key.slice(0, cut) : seen.payment_key),
    logIndex: Number.isSafeInteger(logIndex) ? logIndex : null,
    amount: formatUsdt(micro),
  };
}

/** Blocks from the deposit's block to the watcher's cursor, both included (as the invoice shape counts). */
export function confirmationsAt(depositBlock: string | null, cursorBlock: string | null): number | null {
  if (depositBlock === null || cursorBlock === null) return null;
  const n = BigInt(cursorBlock) - BigInt(depositBlock) + 1n;
  return n < 0n ? 0 : Number(n);
}
