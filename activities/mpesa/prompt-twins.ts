import type { DatabasePool } from 'slonik';
import {
  c2bTwinOfPrompt, c2bTwinState, lockLinkTwins, markC2bCounted, markPromptPaidWithoutReceipt, promptForTwins,
  twinC2bWithPrompt, untwinnedCountedC2b, untwinnedReceiptlessPrompts,
} from '../../db/mpesa-prompt-twins-repo.js';
import { wholeShillings } from '../../rails/mpesa/c2b.js';
import { c2bPaidAt, sameMoney, type TwinC2b, type TwinPrompt } from '../../rails/mpesa/prompt-twin.js';

/**
 * The money of a paid prompt whose callback was lost may arrive again as a paybill confirmation
 * (rails/mpesa/prompt-twin.ts). Each settle path records its decision under the link's lock, so
 * whichever of the two settles second finds the first and the money counts once. Idempotent: a
 * retried settle finds its own decision and answers the same.
 */

const asPrompt = (p: { checkout_request_id: string; phone_number: string; amount_kes: number; created_at: string }): TwinPrompt => ({
  checkoutRequestId: p.checkout_request_id, phone: p.phone_number, amountKes: p.amount_kes, sentAt: new Date(p.created_at),
});
const asC2b = (c: { trans_id: string; msisdn: string | null; amount: string; trans_time: string | null; received_at: string }): TwinC2b => ({
  transId: c.trans_id, msisdn: c.msisdn, amountKes: wholeShillings(c.amount), paidAt: c2bPaidAt(c.trans_time, c.received_at),
});

/** A matched C2B payment about to count: 'twin' when a receipt-less paid prompt of its link already counted the same money. */
export async function c2bAgainstPromptTwins(pool: DatabasePool, linkId: string, c2bId: string): Promise<'count' | 'twin'> {
  return pool.transaction(async (tx) => {
    await lockLinkTwins(tx, linkId);
    const row = await c2bTwinState(tx, c2bId);
    if (row.state === 'counted_as_prompt') return 'twin';
    if (row.counted_at) return 'count';
    const amount = wholeShillings(row.amount);
    const prompts = amount === null ? [] : await untwinnedReceiptlessPrompts(tx, linkId, Number(amount));
    const twin = prompts.map(asPrompt).find((p) => sameMoney(p, asC2b(row)));
    if (twin) {
      await twinC2bWithPrompt(tx, c2bId, twin.checkoutRequestId, 'prompt');
      return 'twin';
    }
    await markC2bCounted(tx, c2bId);
    return 'count';
  });
}

/**
 * A prompt the STK query found paid, with no receipt: `{ countedAs: TransID }` when a C2B payment
 * of its link already counted the same money, else it counts.
 */
export async function promptAgainstC2bTwins(pool: DatabasePool, linkId: string, checkoutRequestId: string): Promise<{ countedAs: string | null }> {
  return pool.transaction(async (tx) => {
    await lockLinkTwins(tx, linkId);
    const earlier = await c2bTwinOfPrompt(tx, checkoutRequestId);
    if (earlier) return { countedAs: earlier.state === 'counted_as_prompt' ? null : earlier.trans_id };
    const prompt = await promptForTwins(tx, checkoutRequestId);
    if (prompt) {
      const counted = await untwinnedCountedC2b(tx, linkId, prompt.amount_kes);
      const twin = counted.find((c) => sameMoney(asPrompt(prompt), asC2b(c)));
      if (twin) {
        await twinC2bWithPrompt(tx, twin.id, checkoutRequestId, 'c2b');
        return { countedAs: twin.trans_id };
      }
    }
    await markPromptPaidWithoutReceipt(tx, checkoutRequestId);
    return { countedAs: null };
  });
}
