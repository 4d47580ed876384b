-- Till (Buy Goods) payments matched by amount (issue 29; db/mpesa-till-repo.ts).
--
-- A till confirmation carries no account number. It names a prompt's link by its receipt (Daraja
-- posts a paid prompt to the C2B URL too), else it matches the one open link whose KES amount
-- still due is its amount: the open links of the store with at least that amount are read.
CREATE INDEX mpesa_callbacks_receipt_idx ON mpesa_callbacks (receipt) WHERE receipt IS NOT NULL;
CREATE INDEX payment_links_open_kes_idx ON payment_links (store_id, environment, mobile_money_amount)
  WHERE status IN ('PENDING', 'PROCESSING') AND mobile_money_amount IS NOT NULL;

-- A confirmation waiting for corroboration (c2bSettlesAlone: false) that Pull Transactions can no
-- longer corroborate (older than its 48-hour reach, or the store is not registered for Pull) is a
-- reconciliation finding of kind 'unverified_payment' (services/mpesa/c2b-unverified.ts). The
-- waiting rows are few: a partial index finds them.
CREATE INDEX mpesa_c2b_payments_awaiting_idx ON mpesa_c2b_payments (received_at) WHERE state = 'awaiting_evidence';
ALTER TABLE reconciliation_findings DROP CONSTRAINT reconciliation_findings_kind_check;
ALTER TABLE reconciliation_findings ADD CONSTRAINT reconciliation_findings_kind_check
  CHECK (kind IN ('mismatch', 'outflow', 'unmatched_payment', 'unverified_payment'));

-- Safaricom's notices about a shortcode's Pull Transactions registration, posted to the CallBackURL
-- given at registration (/v1/callbacks/c2b/pull-notices). The URL carries no credential, so only a
-- bounded summary of each is kept (services/mpesa/pull-notices.ts), for 30 days.
CREATE TABLE mpesa_pull_notices (
  id           bigserial PRIMARY KEY,
  shortcode    text,
  summary      jsonb NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mpesa_pull_notices_received_idx ON mpesa_pull_notices (received_at);
