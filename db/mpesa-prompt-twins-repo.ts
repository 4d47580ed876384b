import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';

/**
 * The decisions that tie a receipt-less paid prompt to its paybill confirmation (migration 0044).
 * Callers hold `lockLinkTwins` for the link in the same transaction, so the two settle paths see
 * each other's decisions.
 */
export async function lockLinkTwins(tx: DatabaseTransactionConnection, linkId: string): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`mpesa-prompt-twin:${linkId}`}, 0))`);
}

const promptRow = z.object({ checkout_request_id: z.string(), phone_number: z.string(), amount_kes: z.number(), created_at: z.string() });
/** The link's prompts the STK query found paid with no receipt, not yet the twin of a C2B payment. */
export async function untwinnedReceiptlessPrompts(db: CommonQueryMethods, linkId: string, amountKes: number) {
  return db.any(sql.type(promptRow)`
    SELECT r.checkout_request_id, r.phone_number, r.amount_kes, r.created_at FROM mpesa_stk_requests r
    WHERE r.link_id = ${linkId} AND r.paid_without_receipt_at IS NOT NULL AND r.amount_kes = ${amountKes}
      AND NOT EXISTS (SELECT 1 FROM mpesa_c2b_payments c WHERE c.twin_of_prompt = r.checkout_request_id)
    ORDER BY r.created_at, r.checkout_request_id`);
}

export async function markPromptPaidWithoutReceipt(db: CommonQueryMethods, checkoutRequestId: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE mpesa_stk_requests SET paid_without_receipt_at = COALESCE(paid_without_receipt_at, now())
    WHERE checkout_request_id = ${checkoutRequestId}`);
}

const c2bRow = z.object({ id: z.string(), trans_id: z.string(), msisdn: z.string().nullable(), amount: z.string(), trans_time: z.string().nullable(),
  received_at: z.string(), state: z.string(), counted_at: z.string().nullable(), twin_of_prompt: z.string().nullable() });
const c2bColumns = sql.fragment`id::text, trans_id, msisdn, amount::text, trans_time, received_at, state, counted_at, twin_of_prompt`;

export async function c2bTwinState(db: CommonQueryMethods, id: string) {
  return db.one(sql.type(c2bRow)`SELECT ${c2bColumns} FROM mpesa_c2b_payments WHERE id = ${id}`);
}

/** The C2B payment a prompt was found to be the same money as, if any. */
export async function c2bTwinOfPrompt(db: CommonQueryMethods, checkoutRequestId: string) {
  return db.maybeOne(sql.type(c2bRow)`SELECT ${c2bColumns} FROM mpesa_c2b_payments WHERE twin_of_prompt = ${checkoutRequestId}`);
}

/** The link's C2B payments told to count, of this amount, not yet the twin of a prompt. */
export async function untwinnedCountedC2b(db: CommonQueryMethods, linkId: string, amountKes: number) {
  return db.any(sql.type(c2bRow)`
    SELECT ${c2bColumns} FROM mpesa_c2b_payments
    WHERE link_id = ${linkId} AND state = 'matched' AND counted_at IS NOT NULL AND twin_of_prompt IS NULL AND amount = ${amountKes}
    ORDER BY id`);
}

export async function markC2bCounted(db: CommonQueryMethods, id: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE mpesa_c2b_payments SET counted_at = COALESCE(counted_at, now()) WHERE id = ${id}`);
}

/** `counted_as_prompt` when the prompt counts the money; left `matched` (counted) when the C2B payment did. */
export async function twinC2bWithPrompt(db: CommonQueryMethods, id: string, checkoutRequestId: string, countedAs: 'prompt' | 'c2b'): Promise<void> {
  await db.query(sql.unsafe`UPDATE mpesa_c2b_payments SET twin_of_prompt = ${checkoutRequestId},
    state = ${countedAs === 'prompt' ? 'counted_as_prompt' : 'matched'} WHERE id = ${id}`);
}

/** The prompt as the twin rule reads it (its phone, amount and when it was sent). */
export async function promptForTwins(db: CommonQueryMethods, checkoutRequestId: string) {
  return db.maybeOne(sql.type(promptRow)`
    SELECT checkout_request_id, phone_number, amount_kes, created_at FROM mpesa_stk_requests WHERE checkout_request_id = ${checkoutRequestId}`);
}
