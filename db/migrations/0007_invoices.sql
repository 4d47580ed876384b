-- Invoices share the payment-link read model and workflow: an invoice is a single-rail USDT
-- request with a public lookup. `kind` keeps the two apart in every query.
ALTER TABLE payment_links ADD COLUMN kind text NOT NULL DEFAULT 'payment_link' CHECK (kind IN ('payment_link', 'invoice'));
DROP INDEX payment_links_list_idx;
DROP INDEX payment_links_status_idx;
CREATE INDEX payment_links_list_idx ON payment_links (store_id, environment, kind, created_at DESC, id DESC);
CREATE INDEX payment_links_status_idx ON payment_links (store_id, environment, kind, status, created_at DESC);
