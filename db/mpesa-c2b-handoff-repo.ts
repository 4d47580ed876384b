import { sql, type CommonQueryMethods } from 'slonik';
import { c2bColumns, c2bRow, type C2bPaymentRow } from './mpesa-c2b-repo.js';

/**
 * Matched C2B confirmations that their link has not counted: stored, then the process died or
 * Temporal could not be reached before the link's workflow was told (Daraja does not post a
 * confirmation again). Older than `graceSeconds` (a telling in flight is not raced) and younger
 * than three days (the longest a link watches late payments); oldest first.
 */
export async function findUntoldC2bPayments(db: CommonQueryMethods, graceSeconds: number, limit: number): Promise<readonly C2bPaymentRow[]> {
  return db.any(sql.type(c2bRow)`
    SELECT ${c2bColumns} FROM mpesa_c2b_payments c
    WHERE c.state = 'matched' AND c.link_id IS NOT NULL
      AND c.received_at > now() - interval '3 days' AND c.received_at < now() - make_interval(secs => ${graceSeconds})
      AND NOT EXISTS (SELECT 1 FROM link_payments lp WHERE lp.link_id = c.link_id AND lp.payment_key = 'c2b:' || c.shortcode || ':' || c.trans_id)
    ORDER BY c.received_at LIMIT ${limit}`);
}
