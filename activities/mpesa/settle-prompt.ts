import type { DatabasePool } from 'slonik';
import { findStkRequestByCheckoutId, listCallbacks, markCallbacksSuspicious } from '../../db/mpesa-repo.js';
import { believableReceipts, disputedReceipt, receiptsDisagree } from '../../rails/mpesa/receipts.js';
import { isSuccessCode } from '../../rails/mpesa/result-codes.js';
import type { Metrics } from '../../domain/metrics.js';
import type { ServiceSettings } from '../../services/settings.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import { queryStkPush } from './query-stk-push.js';
import { mpesaFacts } from '../../rails/mpesa/facts.js';
import { parseC2bPaymentKey } from '../../rails/mpesa/c2b.js';
import { countedC2bWithTransId } from '../../db/mpesa-c2b-repo.js';
import { settleC2bPayment } from './settle-c2b.js';
import { promptAgainstC2bTwins } from './prompt-twins.js';

export type PromptSettlement =
  | { status: 'succeeded'; report: PaymentReport }
  | { status: 'failed'; reason: string }
  /** Still open on the phone, or not (yet) known to Daraja: ask again later. */
  | { status: 'pending' | 'unknown_request' }
  /** No prompt with that CheckoutRequestID was sent for this link: a forged or misrouted hint. */
  | { status: 'not_ours' };

/**
 * Settles one prompt from evidence: the STK query (an authenticated pull with the merchant's own
 * credentials) decides whether it was paid; callbacks only supply the receipt number. The amount
 * is the prompt's own — an STK push cannot be paid at another amount — so nothing a callback
 * claims changes what is counted. Callbacks the query contradicts are marked suspicious.
 * Daraja failures throw (the workflow retries later); the result carries no secret.
 */
export async function settleStkPrompt(
  deps: { pool: DatabasePool; config: ServiceSettings; now?: () => Date; metrics?: Metrics },
  input: { linkId: string; checkoutRequestId: string },
): Promise<PromptSettlement> {
  // A paybill or till payment (C2B) reaches the workflow as a hint like a prompt's callback.
  if (parseC2bPaymentKey(input.checkoutRequestId)) return settleC2bPayment(deps.pool, { linkId: input.linkId, key: input.checkoutRequestId });
  const request = await findStkRequestByCheckoutId(deps.pool, input.checkoutRequestId);
  if (!request || request.link_id !== input.linkId) return { status: 'not_ours' };
  const answer = await queryStkPush(deps, input);
  const callbacks = await listCallbacks(deps.pool, input.checkoutRequestId);
  const claimsSuccess = callbacks.filter((c) => isSuccessCode(c.result_code));
  if (answer.status === 'failed') {
    await markCallbacksSuspicious(deps.pool, claimsSuccess.map((c) => c.id), `claims success; the STK query says ${answer.resultCode}`);
    return { status: 'failed', reason: answer.reason ?? 'M-Pesa reported the payment failed.' };
  }
  if (answer.status !== 'succeeded') return { status: answer.status };
  const failures = callbacks.filter((c) => !isSuccessCode(c.result_code));
  await markCallbacksSuspicious(deps.pool, failures.map((c) => c.id), 'claims failure; the STK query says the prompt was paid');
  const candidates = believableReceipts(claimsSuccess, String(request.amount_kes));
  if (receiptsDisagree(candidates)) await markCallbacksSuspicious(deps.pool, candidates.map((c) => c.id), disputedReceipt);
  const receipt = receiptsDisagree(candidates) ? undefined : candidates[0];
  // The same receipt already counted as a paybill confirmation (C2B) of this link: counted once.
  if (receipt?.receipt && (await countedC2bWithTransId(deps.pool, input.linkId, receipt.receipt))) {
    return { status: 'failed', reason: `Paid, and already counted as M-Pesa payment ${receipt.receipt} (the same receipt arrived as a paybill confirmation).` };
  }
  // No receipt to compare: the same link, amount, phone and time tell a paybill confirmation of this money.
  const twin = receipt ? { countedAs: null } : await promptAgainstC2bTwins(deps.pool, input.linkId, input.checkoutRequestId);
  if (twin.countedAs) {
    return { status: 'failed', reason: `Paid, and already counted as M-Pesa payment ${twin.countedAs} (its paybill confirmation: same phone, amount and time).` };
  }
  return {
    status: 'succeeded',
    report: {
      rail: mpesaFacts.id,
      key: input.checkoutRequestId,
      // Without a believable callback the query carries no receipt: the CheckoutRequestID stands in.
      externalId: receipt?.receipt ?? input.checkoutRequestId,
      payer: receipt?.phone_number ?? request.phone_number,
      amountMinor: String(request.amount_kes),
      decimals: 0,
      at: receipt?.transaction_at ?? receipt?.received_at ?? (deps.now ?? (() => new Date()))().toISOString(),
    },
  };
}

/**
 * Success callbacks that name a receipt and the prompt's amount and were not found suspicious.
 * Callbacks are unsigned, so a receipt is shown only when they all agree on it; otherwise the
 * CheckoutRequestID stands in (the STK query, which decides the payment, carries no receipt).
 */
