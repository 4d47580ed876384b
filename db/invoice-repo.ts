import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { linkRowSchema } from './payment-link-repo.js';

export const invoiceViewSchema = linkRowSchema.extend({
  publishable_key: z.string().nullable(),
  tx_hash: z.string().nullable(),
  confirmations: z.number(),
});
export type InvoiceView = z.infer<typeof invoiceViewSchema>;

/**
 * Everything the public invoice shape needs in one statement (it is polled every few seconds by
 * every open checkout): the row, the store's publishable key, and the latest live deposit with its
 * depth measured against the watcher's cursor.
 */
export async function findInvoiceView(db: CommonQueryMethods, id: string): Promise<InvoiceView | null> {
  return db.maybeOne(sql.type(invoiceViewSchema)`
    SELECT l.id, l.store_id, l.environment, l.status, l.usdt_amount, l.mobile_money_amount, l.kes_per_usdt, l.rate_source,
      l.enabled_rails, l.tron_address, l.evm_address, l.solana_address, l.solana_reference, l.solana_mint, l.mobile_money_shortcode,
      l.description, l.merchant_ref, l.metadata, l.redirect_url, l.expires_at, l.created_at, l.confirmed_rail, l.confirmed_at,
      l.external_id, l.payer, l.amount_received_minor, l.simulated, l.kind,
      k.publishable_key,
      COALESCE(d.tx_hash, l.external_id) AS tx_hash,
      (CASE WHEN d.tx_hash IS NOT NULL THEN GREATEST(0, COALESCE(c.block_number, 0) - d.block_number + 1)
            WHEN l.status = 'CONFIRMED' THEN 1 ELSE 0 END)::int AS confirmations
    FROM payment_links l
    LEFT JOIN LATERAL (
      SELECT publishable_key FROM api_keys
      WHERE store_id = l.store_id AND environment = l.environment AND kind = 'publishable'
        AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
      ORDER BY replaced_by IS NULL DESC, created_at DESC LIMIT 1) k ON true
    LEFT JOIN LATERAL (
      SELECT tx_hash, block_number, rail FROM chain_deposits
      WHERE owner_kind = 'invoice' AND owner_id = l.id AND state <> 'dropped'
      ORDER BY block_number DESC, log_index DESC LIMIT 1) d ON true
    LEFT JOIN chain_cursors c ON c.rail = d.rail AND c.environment = l.environment
    WHERE l.id = ${id} AND l.kind = 'invoice'`);
}
