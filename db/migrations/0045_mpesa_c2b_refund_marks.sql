-- An unallocated M-Pesa payment marked for refund outside Malipo (issue 29, item 6): the merchant
-- reverses it with M-Pesa; Malipo records who marked it, when and why, and counts it nowhere.
ALTER TABLE mpesa_c2b_payments DROP CONSTRAINT mpesa_c2b_payments_state_check;
ALTER TABLE mpesa_c2b_payments ADD CONSTRAINT mpesa_c2b_payments_state_check
  CHECK (state IN ('matched', 'unallocated', 'awaiting_evidence', 'counted_as_prompt', 'disputed', 'refund_outside'));
ALTER TABLE mpesa_c2b_payments
  ADD COLUMN refund_marked_by text,
  ADD COLUMN refund_marked_at timestamptz,
  ADD COLUMN refund_note text;
CREATE INDEX mpesa_c2b_payments_refund_idx ON mpesa_c2b_payments (store_id, environment, refund_marked_at) WHERE state = 'refund_outside';
