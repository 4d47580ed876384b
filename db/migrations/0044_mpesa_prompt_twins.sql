-- A paid prompt whose callback was lost has no receipt, so its paybill confirmation (C2B) twin
-- cannot be recognised by TransID (rails/mpesa/prompt-twin.ts). Both settle paths record their
-- decision here, under a per-link lock (activities/mpesa/prompt-twins.ts), so that whichever
-- comes second finds the first:
--   paid_without_receipt_at: the STK query said the prompt was paid and no callback named a receipt;
--   counted_at:              the link's workflow was told to count this C2B payment;
--   twin_of_prompt:          the receipt-less prompt this C2B payment is the same money as (one at most).
ALTER TABLE mpesa_stk_requests ADD COLUMN paid_without_receipt_at timestamptz;
ALTER TABLE mpesa_c2b_payments
  ADD COLUMN counted_at timestamptz,
  ADD COLUMN twin_of_prompt text UNIQUE;

-- C2B payments counted before this migration.
UPDATE mpesa_c2b_payments c SET counted_at = c.received_at
WHERE c.state = 'matched' AND EXISTS (
  SELECT 1 FROM link_payments p WHERE p.link_id = c.link_id AND p.external_id = c.trans_id AND p.payment_key LIKE 'c2b:%' AND p.state = 'confirmed');
