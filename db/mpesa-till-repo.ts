import { sql, type CommonQueryMethods, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { Environment } from '../domain/environment.js';

/**
 * Till (Buy Goods) payments carry no account number: they are matched to a link by amount only
 * (docs/mobile-money.md, "Till payments"). These are the two reads that need, under one lock.
 */

/**
 * Serialises till matching within a store and environment until the transaction ends: two till
 * payments of the same amount arriving together are matched one after the other, so the second
 * sees the first one's claim.
 */
export async function lockTillMatching(tx: DatabaseTransactionConnection, storeId: string, environment: Environment): Promise<void> {
  await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${`mpesa_till_match:${storeId}:${environment}`}, 0))`);
}

/**
 * The open links of the store (PENDING or PROCESSING, unexpired, offering a prompted rail) whose
 * KES amount still due is exactly `amount`: at most two (two already mean "ambiguous").
 *
 * "Still due" is what the link shows as `mobileMoneyAmountDue` (services/payment-links/dto.ts):
 * its KES amount less the confirmed payments of a prompted rail that counted toward it (not
 * duplicates, not after cancel). It also subtracts the C2B payments already matched to the link
 * that it has not counted yet (`matched`, or `awaiting_evidence` under the store's trust policy):
 * those are claims on the link, so a second payment of the same amount does not match it again
 * before the first is counted.
 */
export async function findTillCandidates(
  db: CommonQueryMethods,
  q: { storeId: string; environment: Environment; amount: string; promptRails: readonly string[]; paymentKeyPrefix: string },
): Promise<string[]> {
  const rails = sql.array([...q.promptRails], 'text');
  const rows = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    SELECT l.id FROM payment_links l
    WHERE l.store_id = ${q.storeId} AND l.environment = ${q.environment}
      AND l.status IN ('PENDING', 'PROCESSING') AND l.expires_at > now()
      AND l.enabled_rails && ${rails} AND l.mobile_money_amount IS NOT NULL AND l.mobile_money_amount >= ${q.amount}::numeric
      AND l.mobile_money_amount
        - COALESCE((SELECT sum(p.amount_minor) FROM link_payments p
            WHERE p.link_id = l.id AND p.state = 'confirmed' AND p.rail = ANY(${rails})
              AND p.disposition IS DISTINCT FROM 'duplicate' AND p.disposition IS DISTINCT FROM 'after_cancel'), 0)
        - COALESCE((SELECT sum(c.amount) FROM mpesa_c2b_payments c
            WHERE c.link_id = l.id AND c.state IN ('matched', 'awaiting_evidence')
              AND NOT EXISTS (SELECT 1 FROM link_payments p
                WHERE p.link_id = l.id AND p.payment_key = ${q.paymentKeyPrefix} || c.shortcode || ':' || c.trans_id AND p.state = 'confirmed')), 0)
        = ${q.amount}::numeric
    ORDER BY l.id
    LIMIT 2`);
  return [...rows];
}

/**
 * The link of the store's prompt whose believable callback named this receipt. Daraja may post a
 * paid prompt to the C2B confirmation URL too (TransID = the receipt); a till's carries no
 * reference, so the receipt is what names the prompt's link.
 */
export async function findLinkOfPromptReceipt(db: CommonQueryMethods, storeId: string, environment: Environment, receipt: string): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT r.link_id AS id FROM mpesa_callbacks c JOIN mpesa_stk_requests r USING (checkout_request_id)
    WHERE c.receipt = ${receipt} AND r.store_id = ${storeId} AND r.environment = ${environment} AND c.suspicious_reason IS NULL
    LIMIT 1`);
}
