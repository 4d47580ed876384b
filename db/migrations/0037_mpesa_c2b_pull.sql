-- M-Pesa Pull Transactions (issue 29, item 5): backfill and corroboration of C2B confirmations.
--
-- Whether the store's shortcode is registered for Safaricom's Pull Transactions API (a one-time
-- registration, made on connect when the merchant names a nominated number): only such stores are
-- pulled. pulled_at: the end of the last window pulled (the next pull overlaps it).
ALTER TABLE mobile_money_connections
  ADD COLUMN c2b_pull_registered_at timestamptz,
  ADD COLUMN c2b_pull_error text,
  ADD COLUMN c2b_pulled_at timestamptz;

-- source: how the payment reached us first ('confirmation' posted by Daraja, or 'pull' when the
-- confirmation never arrived). pulled_at / pulled: when Pull Transactions listed it, and the
-- record as listed (what corroborated, or contradicted, the confirmation).
ALTER TABLE mpesa_c2b_payments
  ADD COLUMN source text NOT NULL DEFAULT 'confirmation' CHECK (source IN ('confirmation', 'pull')),
  ADD COLUMN pulled_at timestamptz,
  ADD COLUMN pulled jsonb;

-- A pulled record that a confirmation contradicts is recorded as suspicious, kind 'pull_mismatch'.
ALTER TABLE mpesa_c2b_suspicious_posts DROP CONSTRAINT mpesa_c2b_suspicious_posts_kind_check;
ALTER TABLE mpesa_c2b_suspicious_posts ADD CONSTRAINT mpesa_c2b_suspicious_posts_kind_check
  CHECK (kind IN ('unknown_token', 'altered', 'malformed', 'pull_mismatch'));

-- The reconciler reports a pulled M-Pesa payment that matches no link: kind 'unmatched_payment',
-- status 'noted', address '<shortcode>:<TransID>' (one finding per payment: its id is derived).
ALTER TABLE reconciliation_findings DROP CONSTRAINT reconciliation_findings_kind_check;
ALTER TABLE reconciliation_findings ADD CONSTRAINT reconciliation_findings_kind_check
  CHECK (kind IN ('mismatch', 'outflow', 'unmatched_payment'));
