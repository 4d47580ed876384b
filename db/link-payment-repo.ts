import { sql, type CommonQueryMethods } from 'slonik';
import type { PaymentReport } from '../domain/payment-report.js';
import type { KesAtCount } from '../domain/kes-value.js';
import type { LinkStatus } from '../domain/states.js';

/** A payment's state in the read model, and how it counted (activities/links). */
export type PaymentState = 'initiated' | 'seen' | 'confirmed' | 'failed' | 'dropped';
export type Disposition = 'payment' | 'late' | 'duplicate' | 'after_cancel' | 'underpaid' | 'overpaid';

/** Moves a link from one of `from` to `to`; false when it was in none of them (a repeat changes nothing). */
export async function moveLinkStatus(db: CommonQueryMethods, linkId: string, from: LinkStatus[], to: LinkStatus): Promise<boolean> {
  const result = await db.query(sql.unsafe`
    UPDATE payment_links SET status = ${to}, updated_at = now(), version = version + 1
    WHERE id = ${linkId} AND status = ANY(${sql.array(from, 'text')})`);
  return result.rowCount > 0;
}

export async function setAmountReceived(db: CommonQueryMethods, linkId: string, receivedMicro: string): Promise<void> {
  await db.query(sql.unsafe`UPDATE payment_links SET amount_received_minor = ${receivedMicro}, updated_at = now() WHERE id = ${linkId}`);
}

/** The link confirmed by `report`, from one of `from` (a repeat changes nothing); whether this call moved it. */
export async function markLinkConfirmed(
  db: CommonQueryMethods,
  linkId: string,
  from: LinkStatus[],
  c: { report: PaymentReport; confirmedAt: string; receivedMicro: string },
): Promise<boolean> {
  const r = c.report;
  const result = await db.query(sql.unsafe`
    UPDATE payment_links SET status = 'CONFIRMED', confirmed_rail = ${r.rail}, confirmed_at = ${c.confirmedAt},
      external_id = ${r.externalId}, payer = ${r.payer}, amount_received_minor = ${c.receivedMicro},
      simulated = ${r.simulated ?? false}, updated_at = now(), version = version + 1
    WHERE id = ${linkId} AND status = ANY(${sql.array(from, 'text')})`);
  return result.rowCount > 0;
}

/** The watch window is over: chain watchers stop matching the owner's addresses. */
export async function stopWatchingOwner(db: CommonQueryMethods, ownerId: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM watched_addresses WHERE owner_id = ${ownerId}`);
}

/**
 * Records or advances one payment of a link, keyed by (link, payment key). A confirmed payment
 * is counted: `counted_at` and its KES value then (`kes`, domain/kes-value.ts) are written the
 * first time it is written confirmed and never again, so a retried count changes nothing.
 */
export async function upsertPayment(
  db: CommonQueryMethods,
  linkId: string,
  p: { report: PaymentReport; state: PaymentState; disposition: Disposition | null; failureReason?: string | null; kes?: KesAtCount },
): Promise<void> {
  const r = p.report;
  const counted = p.state === 'confirmed';
  const kes = counted ? p.kes : undefined;
  await db.query(sql.unsafe`
    INSERT INTO link_payments (link_id, payment_key, rail, external_id, payer, amount_minor, decimals, state, disposition, failure_reason, block_number,
      counted_at, kes_value, kes_rate, kes_rate_source, kes_missing_reason)
    VALUES (${linkId}, ${r.key}, ${r.rail}, ${r.externalId}, ${r.payer}, ${r.amountMinor}, ${r.decimals}, ${p.state}, ${p.disposition},
      ${p.failureReason ?? null}, ${r.blockNumber ?? null},
      ${counted ? sql.fragment`now()` : null}, ${kes?.kesValue ?? null}, ${kes?.rate ?? null}, ${kes?.source ?? null},
      ${counted ? (kes ? kes.missingReason : 'no KES value recorded') : null})
    ON CONFLICT (link_id, payment_key) DO UPDATE SET
      state = EXCLUDED.state,
      disposition = COALESCE(EXCLUDED.disposition, link_payments.disposition),
      failure_reason = EXCLUDED.failure_reason,
      -- A failure or drop keeps the id the payment was known by; a confirmation brings the final one (the M-Pesa receipt).
      external_id = CASE WHEN EXCLUDED.state IN ('failed', 'dropped') THEN link_payments.external_id
                         ELSE COALESCE(EXCLUDED.external_id, link_payments.external_id) END,
      payer = COALESCE(EXCLUDED.payer, link_payments.payer),
      amount_minor = COALESCE(EXCLUDED.amount_minor, link_payments.amount_minor),
      block_number = COALESCE(EXCLUDED.block_number, link_payments.block_number),
      -- Counted once: the first confirmed write sets these, a repeat keeps them.
      counted_at = COALESCE(link_payments.counted_at, EXCLUDED.counted_at),
      kes_value = CASE WHEN link_payments.counted_at IS NULL THEN EXCLUDED.kes_value ELSE link_payments.kes_value END,
      kes_rate = CASE WHEN link_payments.counted_at IS NULL THEN EXCLUDED.kes_rate ELSE link_payments.kes_rate END,
      kes_rate_source = CASE WHEN link_payments.counted_at IS NULL THEN EXCLUDED.kes_rate_source ELSE link_payments.kes_rate_source END,
      kes_missing_reason = CASE WHEN link_payments.counted_at IS NULL THEN EXCLUDED.kes_missing_reason ELSE link_payments.kes_missing_reason END,
      updated_at = now()`);
}
