import type { DatabasePool } from 'slonik';
import { findC2bPayment, promptOfLinkWithReceipt, setC2bState } from '../../db/mpesa-c2b-repo.js';
import { parseC2bPaymentKey, wholeShillings } from '../../rails/mpesa/c2b.js';
import { mpesaFacts } from '../../rails/mpesa/facts.js';
import type { PaymentReport } from '../../domain/payment-report.js';
import { c2bAgainstPromptTwins } from './prompt-twins.js';

/** A subset of the prompt settlement the workflow already reads (settle-prompt.ts). */
export type C2bSettlement = { status: 'succeeded'; report: PaymentReport } | { status: 'not_ours' };

/**
 * Settles a paybill or till payment (C2B) named by a hint, from the stored confirmation: the
 * recorded row, never the signal, says what counts. It counts only when it was stored for this
 * link and the store's trust policy lets a confirmation settle alone (`matched`); the amount is
 * its TransAmount. A confirmation whose TransID is the receipt of one of the link's prompts is the
 * same money told twice: the prompt counts it, the C2B row is marked `counted_as_prompt`. So is one
 * that is the same money as a paid prompt whose callback was lost (no receipt to compare: same
 * link, amount, phone and time; activities/mpesa/prompt-twins.ts).
 * 'not_ours' tells the workflow there is nothing to count (it logs and forgets the hint).
 */
export async function settleC2bPayment(pool: DatabasePool, input: { linkId: string; key: string }): Promise<C2bSettlement> {
  const at = parseC2bPaymentKey(input.key);
  const row = at ? await findC2bPayment(pool, at.shortcode, at.transId) : null;
  if (!row || row.link_id !== input.linkId || row.state !== 'matched') return { status: 'not_ours' };
  if (await promptOfLinkWithReceipt(pool, input.linkId, row.trans_id)) {
    await setC2bState(pool, row.id, 'counted_as_prompt');
    return { status: 'not_ours' };
  }
  if ((await c2bAgainstPromptTwins(pool, input.linkId, row.id)) === 'twin') return { status: 'not_ours' };
  return {
    status: 'succeeded',
    report: {
      rail: mpesaFacts.id,
      key: input.key,
      externalId: row.trans_id,
      // Daraja masks (or hashes) the phone; the payer's name is what it gives in full.
      payer: row.payer_name ?? row.msisdn,
      amountMinor: wholeShillings(row.amount) ?? '0',
      decimals: 0,
      at: row.received_at,
    },
  };
}
