-- Books (issue 32): every payment counted records when it was counted and its KES value then,
-- with the rate and the sources that produced it (docs/reports.md). Written once, in the same
-- idempotent write that counts the payment (db/link-payment-repo.ts `upsertPayment`): a retry
-- never changes them. The value is exact (numeric, no rounding); exports round it to the shilling.
-- No rate at count time: the value and rate stay null and `kes_missing_reason` says why.
ALTER TABLE link_payments
  ADD COLUMN counted_at         timestamptz,
  ADD COLUMN kes_value          numeric,
  ADD COLUMN kes_rate           numeric,
  ADD COLUMN kes_rate_source    text,
  ADD COLUMN kes_missing_reason text;

-- Payments counted before this migration: counted when last written; their KES value was not recorded.
UPDATE link_payments SET counted_at = updated_at, kes_missing_reason = 'counted before KES values were recorded'
WHERE state = 'confirmed';

-- Exports read a period of counted payments in order, in batches (keyset on these columns).
CREATE INDEX link_payments_counted_idx ON link_payments (counted_at, link_id, payment_key) WHERE counted_at IS NOT NULL;
